import PipelineCore
import PlainJSON
import RedisClient

/// `accept_notification`: a verified Server Notification stored and queued once per UUID.
package struct AcceptNotification: PipelineScript {
    package static let script = LuaSource.script("accept_notification")
    package let keys: [String]
    package let arguments: [String]

    /// `tokenUser`: the user the notification's appAccountToken is bound to, if any (its owner comes first).
    package init(_ keys: RedisKeys, job: Job, uuid: String, ttl: Duration, tokenUser: String?) {
        let original = job.notification?.originalTransactionID
        self.keys = [keys.notification(uuid: uuid), keys.ticket(job.ticket), keys.queue(.notify), keys.fulfilment,
            keys.userEvents, keys.figures(day: FigureDay(milliseconds: job.enqueuedAt))]
            + (original.map { [keys.owner(originalTransactionID: $0)] } ?? [])
        var arguments: JSONObject = [
            "ticket": .string(job.ticket), "now": .string(String(job.enqueuedAt)), "ttl": .string(String(ttl.components.seconds)),
            "retention": .string(String(max(RedisKeys.notificationRetention, ttl).components.seconds)),
            "channel": .string(keys.results), "type": .string(job.notification?.type ?? ""),
            "entry": .object((job.notification?.streamFields ?? [:]).mapValues(JSONValue.string)),
        ]
        if let tokenUser { arguments["token_user"] = .string(tokenUser) }
        if let source = job.source, source != "notification" { arguments["source"] = .string(source) }
        self.arguments = [job.encoded(), JSONValue.object(arguments).canonicalText]
    }

    /// The ticket that applies the notification, and whether this call created it.
    package static func decode(_ reply: RedisReply) throws -> (ticket: String, created: Bool) {
        guard let items = reply.array, items.count == 2, let code = items[0].int, code == 0 || code == 1,
            let ticket = items[1].string
        else { throw ScriptReplyError(script: name, reply: reply) }
        return (ticket, code == 1)
    }
}
