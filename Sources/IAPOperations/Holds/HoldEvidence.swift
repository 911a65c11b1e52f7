import PipelineCore
import RedisClient

/// What the rule that held a purchase looks at, as it stands now, for an operator to read beside
/// the purchase before deciding: the user's 24-hour window of the product (`daily_limit_exceeded`),
/// the user's refunds (`refund_limit_exceeded`), the Apple Account's users in the order they
/// joined (`apple_account_shared`), what the purchase was paid in (`currency_*`).
package struct HoldEvidence: Sendable, Equatable {
    package struct Grant: Sendable, Equatable {
        package var unit: String
        package var at: Int64
    }

    package struct Seat: Sendable, Equatable {
        package var user: String
        package var place: Int
    }

    /// The units of the product granted to the user in the last 24 hours, oldest first (at most 50).
    package var dailyWindow: [Grant]?
    /// The user's refunds, every bucket's.
    package var refunds: Refunds?
    /// The Apple Account that bought it and the user's place on it.
    package var appleAccount: AppleAccount?
    /// What the purchase was paid in (absent: Apple did not say, a legacy receipt).
    package var currency: String?

    package struct Refunds: Sendable, Equatable {
        /// In whole, less reversals.
        package var whole: Int
        /// In part, in milliunits (100000 is one).
        package var prorated: Int
    }

    package struct AppleAccount: Sendable, Equatable {
        /// Apple's `appTransactionId`.
        package var id: String
        /// The user's place in the order the account's users joined.
        package var place: Int?
        /// How many joined.
        package var joined: Int
        /// The seats in order, when 50 or fewer joined.
        package var seats: [Seat]?
    }
}

extension PipelineStore {
    /// Each hold's evidence, for its own rule only: one round trip for all, and one more for the
    /// seats of the Apple Accounts that have 50 users or fewer.
    package func evidence(for holds: [HeldPurchase]) async throws -> [HoldEvidence] {
        var commands: [RedisCommand] = []
        var ranges: [Range<Int>] = []
        for hold in holds {
            let start = commands.count
            switch hold.reason {
            case ReasonCode.dailyLimitExceeded:
                commands.append(RedisCommand("ZRANGE", keys.dailyWindow(user: hold.userID, product: hold.productID), "0", "49", "WITHSCORES"))
            case ReasonCode.refundLimitExceeded:
                commands += keys.everyBucket.flatMap {
                    [RedisCommand("GET", $0.refunds(user: hold.userID)), RedisCommand("GET", $0.refundsProrated(user: hold.userID))]
                }
            case ReasonCode.appleAccountShared:
                if let account = hold.appTransactionID {
                    commands += [
                        RedisCommand("HGET", keys.appleAccount(account), "u:\(hold.userID)"), RedisCommand("HGET", keys.appleAccount(account), "joined"),
                    ]
                }
            default:
                break
            }
            ranges.append(start..<commands.count)
        }
        let replies = commands.isEmpty ? [] : try await redis.pipeline(commands)
        for reply in replies { try reply.checked() }
        var found: [HoldEvidence] = []
        for (hold, range) in zip(holds, ranges) {
            var evidence = HoldEvidence(currency: hold.currency)
            let answer = Array(replies[range])
            switch hold.reason {
            case ReasonCode.dailyLimitExceeded:
                let items = (answer.first?.array ?? []).compactMap(\.string)
                evidence.dailyWindow = stride(from: 0, to: items.count - 1, by: 2).map {
                    HoldEvidence.Grant(unit: items[$0], at: Int64(Double(items[$0 + 1]) ?? 0))
                }
            case ReasonCode.refundLimitExceeded:
                let counts = answer.map { Int($0.string ?? "0") ?? 0 }
                evidence.refunds = HoldEvidence.Refunds(
                    whole: stride(from: 0, to: counts.count, by: 2).map { counts[$0] }.reduce(0, +),
                    prorated: stride(from: 1, to: counts.count, by: 2).map { counts[$0] }.reduce(0, +))
            case ReasonCode.appleAccountShared where answer.count == 2:
                evidence.appleAccount = HoldEvidence.AppleAccount(
                    id: hold.appTransactionID ?? "", place: answer[0].string.flatMap { Int($0) }, joined: answer[1].string.flatMap { Int($0) } ?? 0)
            default:
                break
            }
            found.append(evidence)
        }
        // The seats of small accounts, in order: who bought on it first.
        for index in found.indices {
            guard let account = found[index].appleAccount, account.joined <= 50 else { continue }
            let fields = try await redis.send("HGETALL", keys.appleAccount(account.id)).checked().stringDictionary
            let seats = fields.compactMap { field, place in
                field.hasPrefix("u:") ? Int(place).map { HoldEvidence.Seat(user: String(field.dropFirst(2)), place: $0) } : nil
            }
            found[index].appleAccount?.seats = seats.sorted { $0.place < $1.place }
        }
        return found
    }
}
