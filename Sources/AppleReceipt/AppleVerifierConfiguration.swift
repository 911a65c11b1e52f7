/// Where Apple's verifyReceipt lives and how to call it.
public struct AppleVerifierConfiguration: Sendable {
    public static let productionURL = "https://buy.itunes.apple.com/verifyReceipt"
    public static let sandboxURL = "https://sandbox.itunes.apple.com/verifyReceipt"

    public var productionURL: String
    public var sandboxURL: String
    /// The app's shared secret; sent as `password`, never logged.
    public var sharedSecret: String?
    public var excludeOldTransactions: Bool
    public var timeout: Duration
    /// How many requests may be open to Apple at once (one process).
    public var maxConnections: Int

    public init(
        productionURL: String = Self.productionURL,
        sandboxURL: String = Self.sandboxURL,
        sharedSecret: String? = nil,
        excludeOldTransactions: Bool = false,
        timeout: Duration,
        maxConnections: Int
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.sharedSecret = sharedSecret
        self.excludeOldTransactions = excludeOldTransactions
        self.timeout = timeout
        self.maxConnections = maxConnections
    }
}
