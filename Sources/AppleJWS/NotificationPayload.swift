/// An App Store Server Notification V2 (`responseBodyV2DecodedPayload`), the parts the pipeline reads.
public struct NotificationPayload: SignedPayload, Codable, Equatable {
    public var notificationType: String
    public var subtype: String?
    public var notificationUUID: String
    public var version: String?
    public var signedDate: Int64?
    public var data: NotificationData?

    public init(
        notificationType: String, subtype: String? = nil, notificationUUID: String, signedDate: Int64?, data: NotificationData?
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.version = "2.0"
        self.signedDate = signedDate
        self.data = data
    }

    public struct NotificationData: Codable, Sendable, Equatable {
        public var appAppleID: Int64?
        public var bundleID: String?
        public var bundleVersion: String?
        public var environment: String?
        public var signedTransactionInfo: String?
        public var signedRenewalInfo: String?
        public var status: Int?

        public init(
            appAppleID: Int64? = nil, bundleID: String?, environment: String?, signedTransactionInfo: String?,
            signedRenewalInfo: String? = nil
        ) {
            self.appAppleID = appAppleID
            self.bundleID = bundleID
            self.environment = environment
            self.signedTransactionInfo = signedTransactionInfo
            self.signedRenewalInfo = signedRenewalInfo
        }

        enum CodingKeys: String, CodingKey {
            case appAppleID = "appAppleId"
            case bundleID = "bundleId"
            case bundleVersion, environment, signedTransactionInfo, signedRenewalInfo, status
        }
    }
}
