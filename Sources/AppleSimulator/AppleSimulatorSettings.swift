/// How apple-sim behaves beyond what each receipt asks for.
public struct AppleSimulatorSettings: Sendable {
    public var host: String
    public var port: Int
    /// Added to every answer.
    public var latencyMs: Int
    /// The share of requests (0...1) answered HTTP 503 at random.
    public var errorRate: Double
    /// When set, requests with another `password` get 21004.
    public var sharedSecret: String?
    /// The public part of the App Store Server API key (.p8) whose tokens the simulated API accepts;
    /// `nil`: any well-formed, unexpired token.
    public var apiPublicKeyPEM: String?

    public init(
        host: String = "127.0.0.1", port: Int = 9090, latencyMs: Int = 0, errorRate: Double = 0, sharedSecret: String? = nil,
        apiPublicKeyPEM: String? = nil
    ) {
        self.host = host
        self.port = port
        self.latencyMs = latencyMs
        self.errorRate = errorRate
        self.sharedSecret = sharedSecret
        self.apiPublicKeyPEM = apiPublicKeyPEM
    }
}
