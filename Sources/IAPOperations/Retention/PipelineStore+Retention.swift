import IAPStages
import PipelineCore
import RedisClient

extension PipelineStore {
    /// A subscription's record (`subscription:<original>`), every field; empty when none is kept.
    package func subscriptionRecord(originalTransactionID: String) async throws -> [String: String] {
        let reply = try await redis.send("HGETALL", keys.subscription(originalTransactionID: originalTransactionID))
        if case .error(let message) = reply { throw RedisError.server(message) }
        return reply.stringDictionary
    }

    /// What a retention rule is decided on, from the books alone: the owner's refunds (one round
    /// trip), then the grant records of the purchases they hold (`grantRecords`). The subscription's own periods (the grant records of `originalTransactionID`) give
    /// tenure, periods paid, offers redeemed and the latest storefront; every purchase the owner
    /// still holds gives the net spend.
    package func retentionFacts(
        owner: String, originalTransactionID: String, productID: String, sandbox: Bool, now: Int64 = currentTimeMs()
    ) async throws -> RetentionFacts {
        let refunds = try await refundCount(of: owner)
        var periods = SubscriptionPeriods()
        var spend: [String: Int64] = [:]
        for values in try await grantRecords(of: owner, fields: RetentionGrantFields.names) {
            guard let grant = RetentionGrantFields(values), grant.userID == owner else { continue }
            if let (currency, net) = grant.netSpend { spend[currency, default: 0] += net }
            if grant.originalTransactionID == originalTransactionID { periods.add(grant) }
        }
        return RetentionFacts(
            productID: productID, storefront: periods.latestStorefront,
            tenureMonths: periods.firstPurchase.map { Double(max(0, now - $0)) / Self.monthMs }, periodsPaid: periods.paid,
            refunds: refunds, netSpend: spend, offerRedeemedBefore: periods.offerRedeemed,
            sandbox: sandbox)
    }

    /// A month of tenure: a Gregorian year's average (30.436875 days).
    static let monthMs = 30.436875 * 86_400_000

    /// What the facts read of one grant record.
    struct RetentionGrantFields {
        static let names = [
            "user_id", "original_transaction_id", "price", "currency", "quantity", "revoked_quantity", "revoked_at", "purchase_date",
            "granted_at", "offer_type", "offer_discount_type", "storefront",
        ]
        var userID: String
        var originalTransactionID: String
        var netSpend: (String, Int64)?
        /// Apple's purchase date, else when it was granted (ms).
        var boughtAt: Int64?
        var offerType: String
        var freeTrial: Bool
        var storefront: String?

        init?(_ values: [String?]) {
            guard values.count == Self.names.count, let user = values[0] else { return nil }
            userID = user
            originalTransactionID = values[1] ?? ""
            if let price = values[2].flatMap({ Int64($0) }), let currency = values[3] {
                let quantity = values[4].flatMap { Int64($0) } ?? 1
                let revoked = PipelineStore.revokedUnits(quantity: quantity, revokedQuantity: values[5], revokedAt: values[6])
                netSpend = (currency, price * (quantity - revoked))
            }
            boughtAt = values[7].flatMap { Int64($0) } ?? values[8].flatMap { Int64($0) }
            offerType = values[9] ?? ""
            freeTrial = values[10] == "FREE_TRIAL"
            storefront = values[11].flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    /// One subscription's periods as its grant records say.
    struct SubscriptionPeriods {
        var firstPurchase: Int64?
        var latest: Int64?
        var latestStorefront: String?
        var paid = 0
        var offerRedeemed = false

        /// Offers a subscriber redeems (not the introductory one): promotional, offer code, win-back, retention.
        static let redeemedOffers: Set<String> = ["2", "3", "4", "5"]

        mutating func add(_ grant: RetentionGrantFields) {
            if !grant.freeTrial { paid += 1 }
            if Self.redeemedOffers.contains(grant.offerType) { offerRedeemed = true }
            guard let at = grant.boughtAt else { return }
            firstPurchase = min(firstPurchase ?? at, at)
            if at >= (latest ?? .min), let storefront = grant.storefront {
                latest = at
                latestStorefront = storefront
            }
        }
    }
}
