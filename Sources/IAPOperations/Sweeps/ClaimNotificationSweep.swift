import IAPStages
import PipelineCore
import PlainJSON
import RedisClient

/// `claim_notification_sweep`: the lease on the fleet's one notification sweep, taken when due or renewed.
package struct ClaimNotificationSweep: PipelineScript {
    package static let script = LuaSource.script("claim_notification_sweep")
    package let keys: [String]
    package let arguments: [String]

    /// `sweep`: the sweep's hash (the notification sweep's, or the refund sweep's: the same lease).
    package init(_ keys: RedisKeys, sweep: String? = nil, owner: String, lease: Duration, renew: Bool) {
        self.keys = [sweep ?? keys.notificationSweep]
        arguments = [JSONValue.object([
            "owner": .string(owner), "lease_ms": .int(lease.milliseconds), "renew": .bool(renew),
        ]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> NotificationSweepClaim {
        guard case .array(let items) = reply, let code = items.first?.string, items.count >= 2, let number = items[1].int else {
            throw ScriptReplyError(script: name, reply: reply)
        }
        switch code {
        case "claimed" where items.count == 3:
            guard let text = items[2].string, let object = (try? JSONValue(parsing: Array(text.utf8)))?.object else {
                throw ScriptReplyError(script: name, reply: reply)
            }
            let cursors = object.compactMapValues { $0.string.flatMap { Int64($0) } }
            return .claimed(now: number, cursors: cursors)
        case "not_due": return .notDue(until: number)
        case "held": return .held(until: number)
        case "lost": return .lost
        default: throw ScriptReplyError(script: name, reply: reply)
        }
    }
}

/// What `claim_notification_sweep` answered.
package enum NotificationSweepClaim: Sendable, Equatable {
    /// The caller sweeps: Redis's time now (ms) and where each cursor's last window ended (by
    /// name: `Production`, `Sandbox`, or with several apps `<bundle id>:Production`, …).
    case claimed(now: Int64, cursors: [String: Int64])
    /// Not before `until` (ms).
    case notDue(until: Int64)
    /// Another process holds the lease until `until` (ms).
    case held(until: Int64)
    /// A renewal by a process whose lease had expired.
    case lost
}
