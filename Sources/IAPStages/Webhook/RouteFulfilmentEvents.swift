import PipelineCore
import PlainJSON
import RedisClient

/// `route_fulfilment_events`: the next fulfilment entries to their users' delivery lists, a
/// delivery job queued for each user without one. Each user's list and ticket are declared as
/// the script names the users of the entries it will read.
package struct RouteFulfilmentEvents: DeclaringScript {
    package static let script = LuaSource.script("route_fulfilment_events")
    private let redisKeys: RedisKeys
    private var declared: DeclaredKeys
    private var members: [String: JSONValue]
    private var users: [String: JSONValue] = [:]
    package private(set) var arguments: [String]
    package var keys: [String] { declared.list }

    package init(_ keys: RedisKeys, consumer: String, count: Int, now: Int64) {
        redisKeys = keys
        declared = DeclaredKeys([keys.fulfilment, keys.queue(.webhook), keys.webhookBusy])
        members = [
            "group": .string(RedisKeys.webhookGroup), "consumer": .string(consumer), "count": .string(String(count)),
            "now": .string(String(now)), "ttl": .string(String(RedisKeys.webhookTicketTTL.components.seconds)),
            "id_prefix": .string(WebhookEvent.id(entry: "", bucket: keys.bucket, of: keys.layout)),
            "ticket_prefix": .string(keys.webhookTicket(user: "")),
        ]
        arguments = [JSONValue.object(members).canonicalText]
    }

    package mutating func declare(_ needed: RedisReply) throws {
        guard let named = try needed.json(script: Self.name).array, !named.isEmpty else {
            throw ScriptReplyError(script: Self.name, reply: needed)
        }
        for user in named {
            guard let user = user.string else { throw ScriptReplyError(script: Self.name, reply: needed) }
            users[user] = .object([
                "events": .int(declared.index(of: redisKeys.webhookEvents(user: user))),
                "ticket": .int(declared.index(of: redisKeys.ticket(redisKeys.webhookTicket(user: user)))),
            ])
        }
        members["users"] = .object(users)
        arguments = [JSONValue.object(members).canonicalText]
    }

    /// How many entries were routed.
    package static func decode(_ reply: RedisReply) throws -> Int {
        guard let count = reply.int, count >= 0 else { throw ScriptReplyError(script: name, reply: reply) }
        return Int(count)
    }
}
