import PipelineCore
import PlainJSON
import RedisClient

/// `finish_notification_sweep`: the sweep's cursors moved and its lease given back, by its holder only.
package struct FinishNotificationSweep: PipelineScript {
    package static let script = LuaSource.script("finish_notification_sweep")
    package let keys: [String]
    package let arguments: [String]

    package init(
        _ keys: RedisKeys, sweep: String? = nil, owner: String, nextIn: Duration, cursors: [String: Int64], seen: Int, new: Int, invalid: Int,
        error: String?
    ) {
        self.keys = [sweep ?? keys.notificationSweep]
        arguments = [JSONValue.object([
            "owner": .string(owner), "next_in_ms": .int(nextIn.milliseconds),
            "cursors": .object(cursors.mapValues { .string(String($0)) }),
            "seen": .int(seen), "new": .int(new), "invalid": .int(invalid), "error": .string(error ?? ""),
        ]).canonicalText]
    }

    /// `true` when it finished, `false` when the caller had lost the lease (nothing changed).
    package static func decode(_ reply: RedisReply) throws -> Bool {
        switch reply.string {
        case "finished": return true
        case "lost": return false
        default: throw ScriptReplyError(script: name, reply: reply)
        }
    }
}
