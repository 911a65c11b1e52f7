import PipelineCore
import PlainJSON
import RedisClient

/// `route_fulfilment_events`: the next fulfilment entries to one destination's users' delivery
/// lists (those its filter admits), a delivery job queued for each user without one. Each user's
/// list and ticket are declared as the script names the users of the entries it will read.
package struct RouteFulfilmentEvents: DeclaringScript {
    package static let script = LuaSource.script("route_fulfilment_events")
    private let redisKeys: RedisKeys
    private let destination: String
    private var declared: DeclaredKeys
    private var members: JSONObject
    private var users: JSONObject = [:]
    package private(set) var arguments: [String]
    package var keys: [String] { declared.list }

    package init(
        _ keys: RedisKeys, to destination: String = RedisKeys.defaultWebhookDestination, filter: WebhookFilter = .all,
        consumer: String, count: Int, now: Int64
    ) {
        redisKeys = keys
        self.destination = destination
        declared = DeclaredKeys([keys.fulfilment, keys.queue(.webhook), keys.webhookBusy(to: destination), keys.webhookDestinations])
        members = [
            "group": .string(RedisKeys.webhookGroup(to: destination)), "consumer": .string(consumer), "count": .string(String(count)),
            "now": .string(String(now)), "ttl": .string(String(RedisKeys.webhookTicketTTL.components.seconds)),
            "id_prefix": .string(WebhookEvent.id(entry: "", bucket: keys.bucket, of: keys.layout)),
            "ticket_prefix": .string(keys.webhookTicket(user: "", to: destination)), "destination": .string(destination),
        ]
        if let filter = filter.json { members["filter"] = filter }
        arguments = [JSONValue.object(members).canonicalText]
    }

    package mutating func declare(_ needed: RedisReply) throws {
        guard let named = try needed.json(script: Self.name).array, !named.isEmpty else {
            throw ScriptReplyError(script: Self.name, reply: needed)
        }
        for user in named {
            guard let user = user.string else { throw ScriptReplyError(script: Self.name, reply: needed) }
            users[user] = .object([
                "events": .int(declared.index(of: redisKeys.webhookEvents(user: user, to: destination))),
                "ticket": .int(declared.index(of: redisKeys.ticket(redisKeys.webhookTicket(user: user, to: destination)))),
            ])
        }
        members["users"] = .object(users)
        arguments = [JSONValue.object(members).canonicalText]
    }

    /// How many entries were read (routed, or turned away by the filter).
    package static func decode(_ reply: RedisReply) throws -> Int {
        guard let count = reply.int, count >= 0 else { throw ScriptReplyError(script: name, reply: reply) }
        return Int(count)
    }
}
