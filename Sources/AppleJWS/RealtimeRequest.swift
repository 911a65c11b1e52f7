/// Apple's real-time retention request (`DecodedRealtimeRequestBody`): what the App Store signs and
/// POSTs (as `{"signedPayload": …}`) to the Get Retention Message endpoint when a subscriber opens
/// the subscription's page, where they may cancel. It names the subscription by its original
/// transaction id, never the app's bundle id: the app is known by `appAppleId`.
public struct RealtimeRequest: SignedPayload, Codable, Equatable {
    public var originalTransactionID: String
    public var appAppleID: Int64
    public var productID: String
    /// BCP 47 (`en-US`): the locale the message is shown in.
    public var userLocale: String
    /// A UUID, one per request: a request seen twice is a replay.
    public var requestIdentifier: String
    /// Milliseconds since 1970.
    public var signedDate: Int64?
    /// `Production`, `Sandbox`, `Xcode`, `LocalTesting`.
    public var environment: String

    public init(
        originalTransactionID: String, appAppleID: Int64, productID: String, userLocale: String, requestIdentifier: String,
        signedDate: Int64, environment: String
    ) {
        self.originalTransactionID = originalTransactionID
        self.appAppleID = appAppleID
        self.productID = productID
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.signedDate = signedDate
        self.environment = environment
    }

    enum CodingKeys: String, CodingKey {
        case originalTransactionID = "originalTransactionId"
        case appAppleID = "appAppleId"
        case productID = "productId"
        case userLocale, requestIdentifier, signedDate, environment
    }
}
