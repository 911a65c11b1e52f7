import AppleJWS

/// An App Store Server Notification V2 whose signature (and its transaction's and renewal info's)
/// the intake verified at the door: what the notify stage applies.
public struct VerifiedNotification: Codable, Sendable, Equatable {
    public var type: String
    public var subtype: String?
    public var uuid: String
    public var signedDate: Int64?
    public var environment: String?
    public var bundleID: String?
    public var transaction: JWSTransaction?
    public var renewal: JWSRenewalInfo?
    /// `appData`'s signed app transaction (`RESCIND_CONSENT`), verified.
    public var appTransaction: JWSAppTransaction?
    /// `summary` (`RENEWAL_EXTENSION` / `SUMMARY`): a mass renewal-date extension's outcome.
    public var summary: NotificationPayload.Summary?
    /// `externalPurchaseToken` (`EXTERNAL_PURCHASE_TOKEN`).
    public var externalPurchaseToken: NotificationPayload.ExternalPurchaseToken?

    public init(
        _ payload: NotificationPayload, transaction: JWSTransaction?, renewal: JWSRenewalInfo?, appTransaction: JWSAppTransaction? = nil
    ) {
        type = payload.notificationType
        subtype = payload.subtype
        uuid = payload.notificationUUID
        signedDate = payload.signedDate
        environment = payload.data?.environment ?? payload.summary?.environment ?? payload.appData?.environment
        bundleID = payload.data?.bundleID ?? payload.summary?.bundleID ?? payload.appData?.bundleID ?? payload.externalPurchaseToken?.bundleID
        self.transaction = transaction
        self.renewal = renewal
        self.appTransaction = appTransaction
        summary = payload.summary
        externalPurchaseToken = payload.externalPurchaseToken
    }

    enum CodingKeys: String, CodingKey {
        case type, subtype, uuid
        case signedDate = "signed_date"
        case environment
        case bundleID = "bundle_id"
        case transaction, renewal
        case appTransaction = "app_transaction"
        case summary
        case externalPurchaseToken = "external_purchase_token"
    }

    /// The original transaction this notification is about, for the per-subscription record.
    public var originalTransactionID: String? {
        transaction?.originalTransactionID ?? renewal?.originalTransactionID
    }
}
