import ArgumentParser

/// The intake's HTTP server.
public struct IntakeOptions: SettingsGroup {
    @Option(help: "IAP_HTTP_HOST (default 127.0.0.1)") var httpHost: String?
    @Option(help: "IAP_HTTP_PORT (default 8080)") var httpPort: String?
    @Option(help: "IAP_MAX_BODY_BYTES (default 262144)") var maxBodyBytes: String?
    @Option(help: "IAP_APPLE_APP_ID: the app's Apple id; production notifications for another are refused") var appleAppId: String?

    public init() {}

    public var flags: [String: String?] {
        ["IAP_HTTP_HOST": httpHost, "IAP_HTTP_PORT": httpPort, "IAP_MAX_BODY_BYTES": maxBodyBytes, "IAP_APPLE_APP_ID": appleAppId]
    }
}
