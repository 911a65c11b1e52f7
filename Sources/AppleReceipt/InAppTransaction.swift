/// One purchase as Apple lists it in `in_app` or `latest_receipt_info`.
/// Apple sends ids as strings but has been seen sending numbers: both decode.
public struct InAppTransaction: Codable, Sendable, Equatable {
    public var transactionID: String
    public var originalTransactionID: String
    public var productID: String
    public var quantity: Int
    public var webOrderLineItemID: String?
    public var purchaseDateMs: String?
    /// When the purchase was first made (`original_purchase_date_ms`, a signed transaction's
    /// `originalPurchaseDate`): a restore's new transaction keeps the original's.
    public var originalPurchaseDateMs: String?
    public var cancellationDateMs: String?
    /// A subscription period's end (`expires_date_ms`; a signed transaction's `expiresDate`).
    public var expiresDateMs: String?
    /// When Apple signed what we know of it (a signed transaction's `signedDate`); a legacy
    /// receipt has none: the pipeline takes the time it used it.
    public var signedDateMs: String?
    /// StoreKit 2's `appAccountToken`: the app's own id for the account that bought it, when set.
    public var appAccountToken: String?
    /// StoreKit 2's `appTransactionId`: the Apple Account that bought it (one per account and app).
    public var appTransactionID: String?
    /// `PURCHASED`, or `FAMILY_SHARED` for a family member's access to another's purchase
    /// (`in_app_ownership_type`, a signed transaction's `inAppOwnershipType`); absent when Apple did not say.
    public var inAppOwnershipType: String?
    /// A signed transaction's `currency` (ISO 4217) and `storefront` (ISO 3166-1 alpha-3); a
    /// legacy receipt has neither.
    public var currency: String?
    public var storefront: String?
    /// A signed transaction's `price` (milliunits of `currency`: 990 for 0.99) and the offer it
    /// was bought with (`offerType`, `offerIdentifier`, `offerDiscountType`, `offerPeriod`); a
    /// legacy receipt has none of them.
    public var price: String?
    public var offerType: String?
    public var offerIdentifier: String?
    public var offerDiscountType: String?
    public var offerPeriod: String?
    /// A signed transaction's `billingPlanType` (`BILLED_UPFRONT`, or `MONTHLY` within a 12-month
    /// commitment) and, while the subscription is in a commitment, its `commitmentInfo`: the
    /// billing period this transaction pays and of how many, when the commitment ends (ms) and
    /// the price after it (milliunits). A legacy receipt has none of them.
    public var billingPlanType: String?
    public var commitmentPeriod: String?
    public var commitmentPeriods: String?
    public var commitmentExpiresDateMs: String?
    public var commitmentPrice: String?

    public init(
        transactionID: String,
        originalTransactionID: String? = nil,
        productID: String,
        quantity: Int = 1,
        webOrderLineItemID: String? = nil,
        purchaseDateMs: String? = nil,
        cancellationDateMs: String? = nil
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID ?? transactionID
        self.productID = productID
        self.quantity = quantity
        self.webOrderLineItemID = webOrderLineItemID
        self.purchaseDateMs = purchaseDateMs
        self.cancellationDateMs = cancellationDateMs
    }

    /// `cancellation_date_ms` means Apple refunded or revoked it.
    public var isRefunded: Bool { cancellationDateMs.map { !$0.isEmpty } ?? false }

    /// A family member's access to a purchase another made: Apple sets no app account token on it.
    public var isFamilyShared: Bool { inAppOwnershipType == "FAMILY_SHARED" }

    enum CodingKeys: String, CodingKey {
        case transactionID = "transaction_id"
        case originalTransactionID = "original_transaction_id"
        case productID = "product_id"
        case quantity
        case webOrderLineItemID = "web_order_line_item_id"
        case purchaseDateMs = "purchase_date_ms"
        case originalPurchaseDateMs = "original_purchase_date_ms"
        case cancellationDateMs = "cancellation_date_ms"
        case expiresDateMs = "expires_date_ms"
        case signedDateMs = "signed_date_ms"
        case appAccountToken = "app_account_token"
        case appTransactionID = "app_transaction_id"
        case inAppOwnershipType = "in_app_ownership_type"
        case currency, storefront, price
        case offerType = "offer_type"
        case offerIdentifier = "offer_identifier"
        case offerDiscountType = "offer_discount_type"
        case offerPeriod = "offer_period"
        case billingPlanType = "billing_plan_type"
        case commitmentPeriod = "commitment_period"
        case commitmentPeriods = "commitment_periods"
        case commitmentExpiresDateMs = "commitment_expires_date_ms"
        case commitmentPrice = "commitment_price"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        transactionID = try container.decodeLenientString(.transactionID)
        originalTransactionID = try container.decodeLenientStringIfPresent(.originalTransactionID) ?? transactionID
        productID = try container.decodeLenientString(.productID)
        quantity = try container.decodeLenientStringIfPresent(.quantity).flatMap { Int($0) } ?? 1
        webOrderLineItemID = try container.decodeLenientStringIfPresent(.webOrderLineItemID)
        purchaseDateMs = try container.decodeLenientStringIfPresent(.purchaseDateMs)
        originalPurchaseDateMs = try container.decodeLenientStringIfPresent(.originalPurchaseDateMs)
        cancellationDateMs = try container.decodeLenientStringIfPresent(.cancellationDateMs)
        expiresDateMs = try container.decodeLenientStringIfPresent(.expiresDateMs)
        signedDateMs = try container.decodeLenientStringIfPresent(.signedDateMs)
        appAccountToken = try container.decodeIfPresent(String.self, forKey: .appAccountToken)
        appTransactionID = try container.decodeIfPresent(String.self, forKey: .appTransactionID)
        inAppOwnershipType = try container.decodeIfPresent(String.self, forKey: .inAppOwnershipType)
        currency = try container.decodeIfPresent(String.self, forKey: .currency)
        storefront = try container.decodeIfPresent(String.self, forKey: .storefront)
        price = try container.decodeLenientStringIfPresent(.price)
        offerType = try container.decodeLenientStringIfPresent(.offerType)
        offerIdentifier = try container.decodeIfPresent(String.self, forKey: .offerIdentifier)
        offerDiscountType = try container.decodeIfPresent(String.self, forKey: .offerDiscountType)
        offerPeriod = try container.decodeIfPresent(String.self, forKey: .offerPeriod)
        billingPlanType = try container.decodeIfPresent(String.self, forKey: .billingPlanType)
        commitmentPeriod = try container.decodeLenientStringIfPresent(.commitmentPeriod)
        commitmentPeriods = try container.decodeLenientStringIfPresent(.commitmentPeriods)
        commitmentExpiresDateMs = try container.decodeLenientStringIfPresent(.commitmentExpiresDateMs)
        commitmentPrice = try container.decodeLenientStringIfPresent(.commitmentPrice)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(transactionID, forKey: .transactionID)
        try container.encode(originalTransactionID, forKey: .originalTransactionID)
        try container.encode(productID, forKey: .productID)
        try container.encode(String(quantity), forKey: .quantity)
        try container.encodeIfPresent(webOrderLineItemID, forKey: .webOrderLineItemID)
        try container.encodeIfPresent(purchaseDateMs, forKey: .purchaseDateMs)
        try container.encodeIfPresent(originalPurchaseDateMs, forKey: .originalPurchaseDateMs)
        try container.encodeIfPresent(cancellationDateMs, forKey: .cancellationDateMs)
        try container.encodeIfPresent(expiresDateMs, forKey: .expiresDateMs)
        try container.encodeIfPresent(signedDateMs, forKey: .signedDateMs)
        try container.encodeIfPresent(appAccountToken, forKey: .appAccountToken)
        try container.encodeIfPresent(appTransactionID, forKey: .appTransactionID)
        try container.encodeIfPresent(inAppOwnershipType, forKey: .inAppOwnershipType)
        try container.encodeIfPresent(currency, forKey: .currency)
        try container.encodeIfPresent(storefront, forKey: .storefront)
        try container.encodeIfPresent(price, forKey: .price)
        try container.encodeIfPresent(offerType, forKey: .offerType)
        try container.encodeIfPresent(offerIdentifier, forKey: .offerIdentifier)
        try container.encodeIfPresent(offerDiscountType, forKey: .offerDiscountType)
        try container.encodeIfPresent(offerPeriod, forKey: .offerPeriod)
        try container.encodeIfPresent(billingPlanType, forKey: .billingPlanType)
        try container.encodeIfPresent(commitmentPeriod, forKey: .commitmentPeriod)
        try container.encodeIfPresent(commitmentPeriods, forKey: .commitmentPeriods)
        try container.encodeIfPresent(commitmentExpiresDateMs, forKey: .commitmentExpiresDateMs)
        try container.encodeIfPresent(commitmentPrice, forKey: .commitmentPrice)
    }
}

extension KeyedDecodingContainer {
    /// A value Apple may send as a string or as a number, read as a string.
    func decodeLenientStringIfPresent(_ key: Key) throws -> String? {
        if try !contains(key) || decodeNil(forKey: key) { return nil }
        if let text = try? decode(String.self, forKey: key) { return text }
        if let number = try? decode(Int64.self, forKey: key) { return String(number) }
        if let number = try? decode(UInt64.self, forKey: key) { return String(number) }
        if let flag = try? decode(Bool.self, forKey: key) { return flag ? "1" : "0" }
        throw DecodingError.typeMismatch(
            String.self, .init(codingPath: codingPath + [key], debugDescription: "expected a string or a number"))
    }

    func decodeLenientString(_ key: Key) throws -> String {
        guard let value = try decodeLenientStringIfPresent(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing \(key.stringValue)"))
        }
        return value
    }
}
