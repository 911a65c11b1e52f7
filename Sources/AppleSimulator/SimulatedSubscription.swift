import AppleJWS
import Foundation

/// An auto-renewable subscription apple-sim plays: it starts at `start`, renews by itself every
/// `periodMs` (no client involved) `renewals` times, then either expires (the customer turned
/// auto-renew off) or falls into billing retry, first through a grace period of `graceMs`.
/// Its periods' transactions appear as time passes; with `notify`, Apple's notices of each
/// renewal and of the end are sent to a URL, some lost, duplicated or late as Apple's are.
public struct SimulatedSubscription: Codable, Sendable, Equatable {
    public var originalTransactionID: String
    public var productID: String
    public var bundleID: String
    public var environment: String
    public var periodMs: Int64
    /// Renewals that succeed after the first period; `nil`: it renews for ever.
    public var renewals: Int?
    /// After the last renewal: `expire` or `billing_retry`.
    public var ending: Ending
    public var graceMs: Int64
    public var appAccountToken: String?
    /// UNIX ms; absent: when it is started.
    public var start: Int64?
    public var notify: Notify?
    /// The introductory offer the first period was bought with (a free trial), by its id.
    public var introOffer: String?
    /// Apple's win-back offers the subscriber may have once it ended (`eligibleWinBackOfferIds`).
    public var winBackOffers: [String]?

    public enum Ending: String, Codable, Sendable {
        case expire
        case billingRetry = "billing_retry"
    }

    /// Where apple-sim sends its notifications, and how badly: each one is lost with probability
    /// `lossRate`, sent twice with `duplicateRate`, and waits up to `maxDelayMs` (so later ones can
    /// overtake it). Without `url`, as Apple sends: to the environment's notification URL, each
    /// attempt lost with `lossRate`, retried on the schedule (duplicates and delays unused).
    public struct Notify: Codable, Sendable, Equatable {
        public var url: String?
        public var lossRate: Double
        public var duplicateRate: Double
        public var maxDelayMs: Int64

        public init(url: String?, lossRate: Double = 0, duplicateRate: Double = 0, maxDelayMs: Int64 = 0) {
            self.url = url
            self.lossRate = lossRate
            self.duplicateRate = duplicateRate
            self.maxDelayMs = maxDelayMs
        }

        enum CodingKeys: String, CodingKey {
            case url
            case lossRate = "loss_rate"
            case duplicateRate = "duplicate_rate"
            case maxDelayMs = "max_delay_ms"
        }
    }

    public init(
        originalTransactionID: String, productID: String, bundleID: String, environment: String = "Production",
        periodMs: Int64, renewals: Int? = nil, ending: Ending = .expire, graceMs: Int64 = 0, appAccountToken: String? = nil,
        start: Int64? = nil, notify: Notify? = nil
    ) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.bundleID = bundleID
        self.environment = environment
        self.periodMs = periodMs
        self.renewals = renewals
        self.ending = ending
        self.graceMs = graceMs
        self.appAccountToken = appAccountToken
        self.start = start
        self.notify = notify
    }

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "original_transaction_id"
        case productID = "product_id"
        case bundleID = "bundle_id"
        case environment
        case periodMs = "period_ms"
        case renewals, ending
        case graceMs = "grace_ms"
        case appAccountToken = "app_account_token"
        case start, notify
        case introOffer = "intro_offer"
        case winBackOffers = "win_back_offers"
    }

    /// The id of period `k` (0: the original purchase).
    public func transactionID(period k: Int) -> String {
        k == 0 ? originalTransactionID : "\(originalTransactionID)-r\(k)"
    }

    /// The periods begun by `now` (at least the first).
    func periods(at now: Int64, from start: Int64) -> Int {
        let begun = Int(max(now - start, 0) / periodMs) + 1
        return renewals.map { min(begun, $0 + 1) } ?? begun
    }

    /// Period `k`'s transaction, as Apple signs it.
    func transaction(period k: Int, from start: Int64) -> JWSTransaction {
        let begins = start + Int64(k) * periodMs
        var transaction = JWSTransaction(
            transactionID: transactionID(period: k), originalTransactionID: originalTransactionID,
            webOrderLineItemID: "\(originalTransactionID)-w\(k)", bundleID: bundleID, productID: productID,
            purchaseDate: begins, expiresDate: begins + periodMs, type: "Auto-Renewable Subscription",
            appAccountToken: appAccountToken, signedDate: begins, environment: environment)
        transaction.originalPurchaseDate = start
        transaction.transactionReason = k == 0 ? "PURCHASE" : "RENEWAL"
        transaction.currency = "USD"
        transaction.price = 4990
        transaction.storefront = "USA"
        transaction.inAppOwnershipType = "PURCHASED"
        transaction.subscriptionGroupIdentifier = "sim.\(productID)"
        if k == 0, let introOffer {
            transaction.offerType = 1
            transaction.offerIdentifier = introOffer
            transaction.offerDiscountType = "FREE_TRIAL"
            transaction.offerPeriod = "P\(max(periodMs / 86_400_000, 1))D"
            transaction.price = 0
        }
        return transaction
    }

    /// Get All Subscription Statuses' `status` and the renewal info at `now`, after `periods` periods.
    func state(at now: Int64, from start: Int64, periods: Int) -> (status: Int, renewal: JWSRenewalInfo) {
        let ends = start + Int64(periods) * periodMs
        let exhausted = renewals.map { periods > $0 } ?? false
        var renewal = JWSRenewalInfo(
            originalTransactionID: originalTransactionID, productID: productID,
            autoRenewStatus: exhausted && ending == .expire ? 0 : 1, environment: environment, signedDate: now)
        renewal.renewalDate = ends
        if now < ends || !exhausted { return (1, renewal) }
        renewal.expirationIntent = ending == .expire ? 1 : 2
        renewal.eligibleWinBackOfferIDs = winBackOffers
        if ending == .expire { return (2, renewal) }
        renewal.isInBillingRetryPeriod = true
        if graceMs > 0 {
            renewal.gracePeriodExpiresDate = ends + graceMs
            if now < ends + graceMs { return (4, renewal) }
        }
        return (3, renewal)
    }
}
