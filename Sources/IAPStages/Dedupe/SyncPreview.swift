import AppStoreServerAPI
import AppleReceipt
import PlainJSON
import PipelineCore
import RedisClient

/// What a sync would do with each purchase Apple has of a customer, read and never written
/// (`iapctl adopt report`): grant it, adopt it (made before the cutover), hold it, leave it to
/// whoever the books say has it, or reject it. The dedupe stage's own rules decide (its
/// `purchases(for:in:)`), then the books are read for each claim. The counted rules that only the
/// grant step can tell (the daily cap, the refund limit, an Apple Account with too many users)
/// are not applied: a purchase they would hold shows as `grant`.
package struct SyncPreview: Sendable, Equatable {
    package enum Fate: String, Sendable, Encodable {
        case grant, adopt, hold
        /// The books have it already (this user's, or another's: `holder`).
        case known
        case reject
    }

    package struct Line: Sendable, Equatable, Encodable {
        package var transactionID: String
        package var originalTransactionID: String
        package var productID: String
        package var quantity: Int
        package var purchaseDate: String?
        package var unit: String?
        package var fate: Fate
        /// Why held or rejected.
        package var reason: String?
        /// For `known`: the user the books give it to ('' for a claim no grant followed yet).
        package var holder: String?

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id"
            case originalTransactionID = "original_transaction_id"
            case productID = "product_id"
            case purchaseDate = "purchase_date"
            case quantity, unit, fate, reason, holder
        }

        /// The outcome a sync would give it: `granted`, `adopted`, `held`, `duplicate`, `rejected`.
        package var outcome: PurchaseOutcome {
            switch fate {
            case .grant: .granted
            case .adopt: .adopted
            case .hold: .held
            case .known: .duplicate
            case .reject: .rejected
            }
        }
    }

    /// The lines as a ticket's `transactions` (JSON), each with the outcome a sync would give it.
    package var ticketTransactions: String {
        JSONValue.array(lines.map { line in
            .members([
                "transaction_id": .string(line.transactionID), "original_transaction_id": .string(line.originalTransactionID),
                "product_id": .string(line.productID), "quantity": .int(line.quantity), "outcome": .string(line.outcome.rawValue),
                "reason": line.reason.json,
            ])
        }).canonicalText
    }

    package var user: String
    package var lines: [Line]

    /// How many of each fate.
    package var counts: [Fate: Int] { lines.reduce(into: [:]) { $0[$1.fate, default: 0] += 1 } }

    /// What a sync of `receipt` (Apple's history of the customer) for `user` would do.
    package static func of(_ receipt: VerifiedReceipt, user: String, dedupe: DedupeHandler, store: PipelineStore) async throws -> SyncPreview {
        let job = Job(
            ticket: "preview", stage: .dedupe, userID: user, work: .dedupe(Job.Verified(receipt: receipt)), source: Job.syncSource,
            enqueuedAt: currentTimeMs())
        let purchases = dedupe.purchases(for: job, in: receipt)
        let claimed = purchases.filter { $0.isClaimed && $0.unit != nil }
        let replies = try await store.redis.pipeline(claimed.flatMap { purchase -> [RedisCommand] in
            let (unit, original) = (purchase.unit!, purchase.originalTransactionID)
            return [
                RedisCommand("GET", store.keys.claim(unit: unit, originalTransactionID: original)),
                RedisCommand("HGET", store.keys.grant(unit: unit, originalTransactionID: original), "user_id"),
            ]
        })
        var books: [String: String] = [:]
        for (index, purchase) in claimed.enumerated() where replies[2 * index].string != nil {
            books[purchase.unit!] = replies[2 * index + 1].string ?? ""
        }
        let dates = Dictionary(receipt.transactions.map { ($0.transactionID, $0.purchaseDateMs) }, uniquingKeysWith: { first, _ in first })
        let lines = purchases.map { purchase -> Line in
            var line = Line(
                transactionID: purchase.transactionID, originalTransactionID: purchase.originalTransactionID, productID: purchase.productID,
                quantity: purchase.quantity, purchaseDate: dates[purchase.transactionID] ?? nil, unit: purchase.unit, fate: .reject,
                reason: purchase.reason)
            if let unit = purchase.unit, let holder = books[unit] {
                line.fate = .known
                line.holder = holder
                line.reason = nil
            } else if purchase.outcome == .held {
                line.fate = .hold
            } else if purchase.outcome == .pending {
                line.fate = purchase.adopt == true ? .adopt : .grant
            }
            return line
        }
        return SyncPreview(user: user, lines: lines)
    }
}

extension CustomerHistoryReading {
    /// Every transaction Apple has of the customer, read page after page from the start (at most
    /// `maxReads` reads), as one valid receipt; else the read's failing outcome (Apple having none:
    /// `rejected`, `transaction_not_found`).
    package func readAll(_ id: String, environment: String, maxReads: Int = 100) async -> VerificationOutcome {
        var whole: VerifiedReceipt?
        var revision: String?
        for _ in 0..<maxReads {
            let read = await self.read(id, environment: environment, from: revision)
            switch read.outcome {
            case .valid(let receipt):
                if whole == nil { whole = receipt } else { whole?.transactions += receipt.transactions }
            case .rejected(let reason, _) where whole != nil && reason == AppleReason.transactionNotFound:
                return .valid(whole!)
            default:
                return read.outcome
            }
            guard let next = read.revision, next != revision else { break }
            revision = next
        }
        return whole.map { .valid($0) } ?? .rejected(reason: AppleReason.transactionNotFound, detail: nil)
    }
}

