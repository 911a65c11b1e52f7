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

    public init(_ payload: NotificationPayload, transaction: JWSTransaction?, renewal: JWSRenewalInfo?) {
        type = payload.notificationType
        subtype = payload.subtype
        uuid = payload.notificationUUID
        signedDate = payload.signedDate
        environment = payload.data?.environment
        bundleID = payload.data?.bundleID
        self.transaction = transaction
        self.renewal = renewal
    }

    enum CodingKeys: String, CodingKey {
        case type, subtype, uuid
        case signedDate = "signed_date"
        case environment
        case bundleID = "bundle_id"
        case transaction, renewal
    }

    /// The original transaction this notification is about, for the per-subscription record.
    public var originalTransactionID: String? {
        transaction?.originalTransactionID ?? renewal?.originalTransactionID
    }
}
