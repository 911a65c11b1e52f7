@preconcurrency import Crypto
import Foundation

/// Where the App Store Server API lives and how we sign in to it.
public struct ServerAPIConfiguration: Sendable {
    public static let productionURL = "https://api.storekit.apple.com"
    public static let sandboxURL = "https://api.storekit-sandbox.apple.com"

    /// Base URLs; a path prefix is kept (requests go to `<base>/inApps/...`).
    public var productionURL: String
    public var sandboxURL: String
    public var keyID: String
    public var issuerID: String
    /// The `.p8` key (never logged).
    public var privateKey: P256.Signing.PrivateKey
    /// The app the token is for (`bid`).
    public var bundleID: String
    public var timeout: Duration

    public init(
        productionURL: String = Self.productionURL, sandboxURL: String = Self.sandboxURL, keyID: String, issuerID: String,
        privateKey: P256.Signing.PrivateKey, bundleID: String, timeout: Duration = .seconds(15)
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.keyID = keyID
        self.issuerID = issuerID
        self.privateKey = privateKey
        self.bundleID = bundleID
        self.timeout = timeout
    }

    func baseURL(_ environment: ServerAPIEnvironment) -> String {
        let base = environment == .production ? productionURL : sandboxURL
        return base.hasSuffix("/") ? String(base.dropLast()) : base
    }
}

/// Apple's two App Store environments.
public enum ServerAPIEnvironment: String, Sendable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"
}
