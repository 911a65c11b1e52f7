/// A signed app transaction (`JWSAppTransactionDecodedPayload`: StoreKit's `AppTransaction`, a
/// notification's `appData.signedAppTransactionInfo`): one per Apple Account (and family member)
/// and app, present even when nothing was bought. It carries no `signedDate`: it was signed when its
/// receipt was created (`receiptCreationDate`), and its environment is `receiptType`.
public struct JWSAppTransaction: SignedPayload, Codable, Equatable {
    public var appTransactionID: String?
    public var bundleID: String
    public var appAppleID: Int64?
    /// `Production`, `Sandbox`, `Xcode`, `LocalTesting`.
    public var receiptType: String?
    public var receiptCreationDate: Int64?
    public var applicationVersion: String?
    public var originalApplicationVersion: String?
    public var originalPurchaseDate: Int64?
    public var preorderDate: Int64?
    public var originalPlatform: String?

    public var signedDate: Int64? { receiptCreationDate }
    public var environment: String? { receiptType }

    public init(
        appTransactionID: String?, bundleID: String, appAppleID: Int64? = nil, receiptType: String?, receiptCreationDate: Int64?,
        originalPurchaseDate: Int64? = nil
    ) {
        self.appTransactionID = appTransactionID
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.receiptType = receiptType
        self.receiptCreationDate = receiptCreationDate
        self.originalPurchaseDate = originalPurchaseDate
    }

    enum CodingKeys: String, CodingKey {
        case appTransactionID = "appTransactionId"
        case bundleID = "bundleId"
        case appAppleID = "appAppleId"
        case receiptType, receiptCreationDate, applicationVersion, originalApplicationVersion, originalPurchaseDate, preorderDate,
            originalPlatform
    }
}
