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
        in record: PipelineStore.NotificationRecord, event: [String: String]?, users: [String]? = nil,
        refundRequest: RefundRequestMark? = nil, now: Int64
    ) {
        var list = [
            keys.inflight(member: member), keys.ticket(job.ticket), keys.fulfilment, keys.userEvents,
            keys.figures(day: FigureDay(milliseconds: now)),
        ]
        var transactionID: String?
        var askedReason: String?
        var rule: String?
        switch record {
        case .history(let original):
            list.append(keys.notifications(originalTransactionID: original))
            list.append(keys.owner(originalTransactionID: original))
            if let refundRequest {
                list.append(keys.grant(unit: refundRequest.unit, originalTransactionID: original))
                askedReason = refundRequest.askedReason
                rule = refundRequest.rule
            }
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
            "refund_request_reason": askedReason.json,
            "refund_rule": rule.json,
        ]).canonicalText]
    }

    /// What a refund request's notifications do to the purchase's grant record (`grant:<unit>`),
    /// so that Apple's outcome is counted by the request's reason.
    package enum RefundRequestMark: Sendable, Equatable {
        /// `CONSUMPTION_REQUEST`: the record (when the purchase was granted) keeps the reason
        /// (`refund_request_reason`, `refund_requested_at`).
        case asked(unit: String, reason: String, rule: String?)
        /// `REFUND_DECLINED`: its `refund_declined` entry carries the reason the record kept.
        case declined(unit: String)

        var unit: String {
            switch self {
            case .asked(let unit, _, _), .declined(let unit): unit
            }
        }

        /// The rule that answered it (`RefundRule`'s name, or `IAP_REFUND_PREFERENCE`): `nil` when it was not answered.
        var rule: String? {
            if case .asked(_, _, let rule) = self { rule } else { nil }
        }

        var askedReason: String? {
            if case .asked(_, let reason, _) = self { reason } else { nil }
        }
    }

    package static func decode(_ reply: RedisReply) throws -> TransitionResult { try TransitionResult(reply, script: name) }
}
