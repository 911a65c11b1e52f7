import IAPStages
import PipelineCore
import PlainJSON
import RedisClient

/// `import_purchase`: one purchase the old system granted, taken into the books without an event.
package struct ImportPurchase: PipelineScript {
    package static let script = LuaSource.script("import_purchase")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, row: ImportRow, importID: String, now: Int64) {
        let bucket = keys.ofPurchase(originalTransactionID: row.originalTransactionID)
        self.keys = [
            keys.claim(unit: row.unit, originalTransactionID: row.originalTransactionID),
            keys.grant(unit: row.unit, originalTransactionID: row.originalTransactionID),
            keys.owner(originalTransactionID: row.originalTransactionID), bucket.purchases(user: row.userID),
            bucket.lifetime(user: row.userID), bucket.subscriptions(user: row.userID),
        ]
        arguments = [JSONValue.object([
            "now": .string(String(now)), "import": .string(importID), "user_id": .string(row.userID), "unit": .string(row.unit),
            "kind": .string(row.kind.rawValue), "transaction_id": .string(row.transactionID),
            "original_transaction_id": .string(row.originalTransactionID), "product_id": .string(row.productID),
            "quantity": .string(String(row.quantity)), "purchase_date": .string(String(row.purchaseDate)),
            "environment": .string(row.environment),
        ]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> ImportOutcome {
        guard let items = reply.array, items.count == 2, let code = items[0].int else { throw ScriptReplyError(script: name, reply: reply) }
        switch code {
        case 1: return .imported
        case 0: return .seen
        case -1: return .conflict(holder: items[1].string ?? "")
        default: throw ScriptReplyError(script: name, reply: reply)
        }
    }
}

/// What became of one row of an import.
package enum ImportOutcome: Sendable, Equatable {
    case imported
    /// The books had it for this user already (an earlier run, or the pipeline granted it).
    case seen
    /// Another user's (`holder`; empty: claimed by a ticket whose grant has not come yet): left as it is.
    case conflict(holder: String)
}
