import IAPStages
import PipelineCore
import PlainJSON
import RedisClient

/// `grant_by_operator`: a grant by hand, once per operator id.
package struct GrantByOperator: PipelineScript {
    package static let script = LuaSource.script("grant_by_operator")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, id: String, user: String, product: String, quantity: Int, by operatorName: String, note: String, now: Int64) {
        let unit = PipelineStore.operatorUnit(id: id)
        // Its record's original transaction is the operator's id: the purchase's bucket follows from it.
        self.keys = [
            keys.claim(unit: unit, originalTransactionID: id), keys.grant(unit: unit, originalTransactionID: id),
            keys.ofPurchase(originalTransactionID: id).fulfilment, keys.ofPurchase(originalTransactionID: id).purchases(user: user),
            keys.ofPurchase(originalTransactionID: id).userEvents,
        ]
        arguments = [JSONValue.object([
            "now": .string(String(now)), "operator": .string(operatorName), "note": .string(note), "unit": .string(unit),
            "id": .string(id), "user_id": .string(user), "product_id": .string(product), "quantity": .string(String(quantity)),
        ]).canonicalText]
    }

    /// `nil` when granted now, else the user that id was granted to before.
    package static func decode(_ reply: RedisReply) throws -> String? {
        guard let items = reply.array, let code = items.first?.int, items.count == 2 else {
            throw ScriptReplyError(script: name, reply: reply)
        }
        switch code {
        case 1: return nil
        case 0: return items[1].string ?? ""
        default: throw ScriptReplyError(script: name, reply: reply)
        }
    }
}
