/// An App Store Server Notification V2 (`responseBodyV2DecodedPayload`), the parts the pipeline reads.
public struct NotificationPayload: SignedPayload, Codable, Equatable {
    public var notificationType: String
    public var subtype: String?
    public var notificationUUID: String
    public var version: String?
    public var signedDate: Int64?
    /// One of these four members, by type: `data` (most), `summary` (`RENEWAL_EXTENSION` /
    /// `SUMMARY`), `appData` (`RESCIND_CONSENT`), `externalPurchaseToken` (`EXTERNAL_PURCHASE_TOKEN`).
    public var data: NotificationData?
    public var summary: Summary?
    public var appData: AppData?
    public var externalPurchaseToken: ExternalPurchaseToken?

    public init(
        notificationType: String, subtype: String? = nil, notificationUUID: String, signedDate: Int64?, data: NotificationData?,
        summary: Summary? = nil, appData: AppData? = nil, externalPurchaseToken: ExternalPurchaseToken? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.version = "2.0"
        self.signedDate = signedDate
        self.data = data
        self.summary = summary
        self.appData = appData
        self.externalPurchaseToken = externalPurchaseToken
    }

    /// The app each member names, as (bundle id, App Apple ID, environment): what the intake checks
    /// whichever member the notification carries.
    public var apps: [(bundleID: String?, appAppleID: Int64?, environment: String?)] {
        [
            data.map { ($0.bundleID, $0.appAppleID, $0.environment) },
            summary.map { ($0.bundleID, $0.appAppleID, $0.environment) },
            appData.map { ($0.bundleID, $0.appAppleID, $0.environment) },
            externalPurchaseToken.map { ($0.bundleID, $0.appAppleID, $0.environment) },
        ].compactMap { $0 }
    }

    /// `summary`: the outcome of extending the renewal date of every eligible subscriber.
    public struct Summary: Codable, Sendable, Equatable {
        public var requestIdentifier: String?
        public var environment: String?
        public var appAppleID: Int64?
        public var bundleID: String?
        public var productID: String?
        public var storefrontCountryCodes: [String]?
        public var succeededCount: Int64?
        public var failedCount: Int64?

        public init(requestIdentifier: String?, environment: String?, appAppleID: Int64? = nil, bundleID: String?, productID: String?) {
            self.requestIdentifier = requestIdentifier
            self.environment = environment
            self.appAppleID = appAppleID
            self.bundleID = bundleID
            self.productID = productID
        }

        enum CodingKeys: String, CodingKey {
            case appAppleID = "appAppleId"
            case bundleID = "bundleId"
            case productID = "productId"
            case requestIdentifier, environment, storefrontCountryCodes, succeededCount, failedCount
        }
    }

    /// `appData`: the app and, signed, the app transaction a notification is about.
    public struct AppData: Codable, Sendable, Equatable {
        public var appAppleID: Int64?
        public var bundleID: String?
        public var environment: String?
        public var signedAppTransactionInfo: String?

        public init(appAppleID: Int64? = nil, bundleID: String?, environment: String?, signedAppTransactionInfo: String?) {
            self.appAppleID = appAppleID
            self.bundleID = bundleID
            self.environment = environment
            self.signedAppTransactionInfo = signedAppTransactionInfo
        }

        enum CodingKeys: String, CodingKey {
            case appAppleID = "appAppleId"
            case bundleID = "bundleId"
            case environment, signedAppTransactionInfo
        }
    }

    /// `externalPurchaseToken`: a token of a purchase made outside the App Store.
    public struct ExternalPurchaseToken: Codable, Sendable, Equatable {
        public var externalPurchaseID: String?
        public var tokenCreationDate: Int64?
        public var appAppleID: Int64?
        public var bundleID: String?

        /// As Apple documents: a token whose id starts `SANDBOX` is the sandbox's, any other production's.
        public var environment: String { externalPurchaseID?.hasPrefix("SANDBOX") == true ? "Sandbox" : "Production" }

        public init(externalPurchaseID: String?, tokenCreationDate: Int64?, appAppleID: Int64? = nil, bundleID: String?) {
            self.externalPurchaseID = externalPurchaseID
            self.tokenCreationDate = tokenCreationDate
            self.appAppleID = appAppleID
            self.bundleID = bundleID
        }

        enum CodingKeys: String, CodingKey {
            case externalPurchaseID = "externalPurchaseId"
            case appAppleID = "appAppleId"
            case bundleID = "bundleId"
            case tokenCreationDate
        }
    }

    public struct NotificationData: Codable, Sendable, Equatable {
        public var appAppleID: Int64?
        public var bundleID: String?
        public var bundleVersion: String?
        public var environment: String?
        public var signedTransactionInfo: String?
        public var signedRenewalInfo: String?
        public var status: Int?
        /// `CONSUMPTION_REQUEST`: why the customer asks for a refund (`UNINTENDED_PURCHASE`,
        /// `FULFILLMENT_ISSUE`, `UNSATISFIED_WITH_PURCHASE`, `LEGAL`, `OTHER`).
        public var consumptionRequestReason: String?

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
            case bundleVersion, environment, signedTransactionInfo, signedRenewalInfo, status, consumptionRequestReason
        }
    }
}
