import AppleReceipt
import AppStoreServerAPI
import IAPStages
import PipelineCore
import RedisClient

extension PipelineStore {
    /// What the books say about a purchase Apple signed (`unit`: its grant unit, from the
    /// catalog; without one only what is kept by transaction is read): one round trip to the
    /// purchase's bucket, one more for the claiming ticket's status.
    package func books(of transaction: InAppTransaction, environment: String, unit: String?) async throws -> PurchaseBooks {
        let original = transaction.originalTransactionID
        let bucket = keys.ofPurchase(originalTransactionID: original)
        var commands = [
            RedisCommand("GET", bucket.owner(originalTransactionID: original)),
            RedisCommand("HEXISTS", bucket.unclaimed, transaction.transactionID),
            RedisCommand("HGETALL", bucket.subscription(originalTransactionID: original)),
        ]
        if let unit {
            commands += [
                RedisCommand("GET", bucket.claim(unit: unit, originalTransactionID: original)),
                RedisCommand("HGETALL", bucket.grant(unit: unit, originalTransactionID: original)),
                RedisCommand("HGETALL", bucket.hold(unit: unit, originalTransactionID: original)),
                RedisCommand("GET", bucket.refunded(unit: unit, originalTransactionID: original)),
            ]
        }
        let replies = try await redis.pipeline(commands)
        if let failed = replies.first(where: { if case .error = $0 { true } else { false } }), case .error(let message) = failed {
            throw RedisError.server(message)
        }
        var books = PurchaseBooks(transaction: transaction, environment: environment, unit: unit)
        books.owner = replies[0].string
        books.unclaimed = replies[1].int == 1
        books.subscription = replies[2].stringDictionary.filter { $0.key != "receipt" }
        if unit != nil {
            books.claimTicket = replies[3].string
            books.grant = replies[4].stringDictionary
            books.hold = replies[5].stringDictionary
            // `<ms>`, or `<ms>:<percentage>` for a consumable refunded in part.
            books.refundedAt = replies[6].string.map { String($0.prefix { $0 != ":" }) }
        }
        if let claim = books.claimTicket {
            books.claimStatus = try await redis.send("HGET", keys.ticket(claim), "status").string ?? "expired"
        }
        return books
    }
}

extension PipelineStore {
    /// The revision Get Refund History last answered for the customer of `asked` (`nil`: none yet).
    package func refundRevision(asked: String, environment: ServerAPIEnvironment) async throws -> String? {
        let reply = try await redis.send("GET", keys.refundRevision(transactionID: asked, environment: environment.rawValue))
        if case .error(let message) = reply { throw RedisError.server(message) }
        return reply.string
    }

    package func setRefundRevision(_ revision: String, asked: String, environment: ServerAPIEnvironment) async throws {
        let reply = try await redis.send("SET", keys.refundRevision(transactionID: asked, environment: environment.rawValue), revision)
        if case .error(let message) = reply { throw RedisError.server(message) }
    }
}
