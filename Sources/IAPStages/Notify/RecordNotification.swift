import PipelineCore
import PlainJSON
import RedisClient

/// `record_notification`: a notification that grants nothing now, kept; its ticket finished.
package struct RecordNotification: PipelineScript {
    package static let script = LuaSource.script("record_notification")
    package let keys: [String]
    package let arguments: [String]

    package init(
        _ keys: RedisKeys, member: String, taken: String, job: Job, result: String, entry: String,
        in record: PipelineStore.NotificationRecord, event: [String: String]?, users: [String]? = nil, now: Int64
    ) {
        var list = [
            keys.inflight(member: member), keys.ticket(job.ticket), keys.fulfilment, keys.userEvents,
            keys.figures(day: FigureDay(milliseconds: now)),
        ]
        var transactionID: String?
        switch record {
        case .history(let original):
            list.append(keys.notifications(originalTransactionID: original))
            list.append(keys.owner(originalTransactionID: original))
        case .unclaimed(let id, let original):
            list.append(keys.ofPurchase(originalTransactionID: original).unclaimed)
            transactionID = id
        case .nothing: break
        }
        self.keys = list
        arguments = [taken, JSONValue.members([
            "ticket": .string(job.ticket), "now": .string(String(now)), "channel": .string(keys.results),
            "result": .string(result), "entry": .string(entry), "keep": .string("100"), "transaction_id": transactionID.json,
            "event": event.map { .object($0.mapValues(JSONValue.string)) },
            "users": users.map { .array($0.map(JSONValue.string)) },
        ]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> TransitionResult { try TransitionResult(reply, script: name) }
}
