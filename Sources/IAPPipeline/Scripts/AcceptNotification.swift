import PlainJSON
import RedisClient

/// `accept_notification`: a verified Server Notification stored and queued once per UUID.
struct AcceptNotification: PipelineScript {
    static let script = LuaSource.script("accept_notification", PackageResources.accept_notification_lua)
    let keys: [String]
    let arguments: [String]

    init(_ keys: RedisKeys, job: Job, uuid: String, ttl: Duration) {
        self.keys = [keys.notification(uuid: uuid), keys.ticket(job.ticket), keys.queue(.notify)]
        arguments = [job.encoded(), JSONValue.object([
            "ticket": .string(job.ticket), "now": .string(String(job.enqueuedAt)), "ttl": .string(String(ttl.components.seconds)),
            "retention": .string(String(max(RedisKeys.notificationRetention, ttl).components.seconds)),
            "channel": .string(keys.results), "type": .string(job.notification?.type ?? ""),
        ]).canonicalText]
    }

    /// The ticket that applies the notification, and whether this call created it.
    static func decode(_ reply: RedisReply) throws -> (ticket: String, created: Bool) {
        guard let items = reply.array, items.count == 2, let code = items[0].int, code == 0 || code == 1,
            let ticket = items[1].string
        else { throw ScriptReplyError(script: name, reply: reply) }
        return (ticket, code == 1)
    }
}
