import AppleJWS
import Foundation

/// A player who bought for two years on one Apple Account before the game moved onto the
/// pipeline: what apple-sim plays for adoption (`POST /control/players`, tests, the drill).
///
/// Every purchase is dated in the past from `now`: a consumable a month for two years (all but
/// the last two finished by the game: Apple's history lists them either way for an app with
/// `SKIncludeConsumableInAppPurchaseHistory`, the worst case for a double grant), a non-consumable bought 700 days ago, and a monthly
/// subscription bought a year ago and renewing since, its current period running past `now`.
public struct SimulatedPlayer: Codable, Sendable, Equatable {
    /// The Apple Account (`appTransactionId`) every purchase names.
    public var appTransactionID: String
    public var bundleID: String
    /// The first transaction id; the others follow it (numeric, as Apple's).
    public var firstTransactionID: Int64
    /// Purchases are dated before this (ms).
    public var now: Int64
    public var consumable = "gold.100"
    public var nonConsumable = "level.pack"
    public var subscription = "vip.monthly"
    public var environment = "Production"

    public init(appTransactionID: String, bundleID: String, firstTransactionID: Int64, now: Int64) {
        self.appTransactionID = appTransactionID
        self.bundleID = bundleID
        self.firstTransactionID = firstTransactionID
        self.now = now
    }

    static let day: Int64 = 86_400_000
    /// Consumables bought, one every 30 days over two years, and how many of the newest are unfinished.
    public static let consumables = 24, unfinished = 2
    /// The subscription's periods: a year of monthly renewals, the last one current.
    public static let periods = 13

    /// Its purchases, oldest first within each kind: the consumables, the non-consumable, the
    /// subscription's periods.
    public var transactions: [JWSTransaction] {
        var id = firstTransactionID
        func next() -> String {
            defer { id += 1 }
            return String(id)
        }
        var made: [JWSTransaction] = []
        for index in 0..<Self.consumables {
            made.append(purchase(next(), consumable, at: now - 730 * Self.day + Int64(index) * 30 * Self.day, type: "Consumable"))
        }
        made.append(purchase(next(), nonConsumable, at: now - 700 * Self.day, type: "Non-Consumable"))
        let original = next()
        let start = now - Int64(Self.periods - 1) * 30 * Self.day - 5 * Self.day
        for index in 0..<Self.periods {
            let at = start + Int64(index) * 30 * Self.day
            var period = purchase(index == 0 ? original : next(), subscription, at: at, type: "Auto-Renewable Subscription")
            period.originalTransactionID = original
            period.originalPurchaseDate = start
            period.webOrderLineItemID = "\(original)-w\(index)"
            period.expiresDate = at + 30 * Self.day
            made.append(period)
        }
        return made
    }

    /// The consumables the game finished (all but the newest `unfinished`).
    public var finishedTransactionIDs: [String] {
        transactions.filter { $0.productID == consumable }.dropLast(Self.unfinished).map(\.transactionID)
    }

    private func purchase(_ id: String, _ product: String, at: Int64, type: String) -> JWSTransaction {
        var transaction = JWSTransaction(
            transactionID: id, bundleID: bundleID, productID: product, purchaseDate: at, type: type,
            environment: environment)
        transaction.appTransactionID = appTransactionID
        return transaction
    }

    enum CodingKeys: String, CodingKey {
        case appTransactionID = "app_transaction_id"
        case bundleID = "bundle_id"
        case firstTransactionID = "first_transaction_id"
        case now, consumable
        case nonConsumable = "non_consumable"
        case subscription, environment
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        appTransactionID = try container.decode(String.self, forKey: .appTransactionID)
        bundleID = try container.decode(String.self, forKey: .bundleID)
        firstTransactionID = try container.decode(Int64.self, forKey: .firstTransactionID)
        now = try container.decodeIfPresent(Int64.self, forKey: .now) ?? Int64(Date().timeIntervalSince1970 * 1000)
        consumable = try container.decodeIfPresent(String.self, forKey: .consumable) ?? consumable
        nonConsumable = try container.decodeIfPresent(String.self, forKey: .nonConsumable) ?? nonConsumable
        subscription = try container.decodeIfPresent(String.self, forKey: .subscription) ?? subscription
        environment = try container.decodeIfPresent(String.self, forKey: .environment) ?? environment
    }
}

extension SimulatedServerAPI {
    /// Makes the player's two years of purchases known to the API (its history, look-ups); returns them.
    @discardableResult
    public func registerPlayer(_ player: SimulatedPlayer) throws -> [JWSTransaction] {
        let transactions = player.transactions
        for transaction in transactions { try register(transaction) }
        return transactions
    }
}
