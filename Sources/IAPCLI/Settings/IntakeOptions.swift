import ArgumentParser

/// The intake's HTTP server.
public struct IntakeOptions: SettingsGroup {
    @Option(help: "IAP_HTTP_HOST (default 127.0.0.1)") var httpHost: String?
    @Option(help: "IAP_HTTP_PORT (default 8080)") var httpPort: String?
    @Option(help: "IAP_MAX_BODY_BYTES (default 262144)") var maxBodyBytes: String?
    @Option(help: "IAP_APPLE_APP_ID: the app's Apple id; production notifications for another are refused") var appleAppId: String?
    @Option(help: "IAP_CLIENT_KEYS_FILE: JSON of key id → secret; set, every request to /v1/receipts* and /v1/users/* must be signed (reloaded on SIGHUP)")
    var clientKeysFile: String?
    @Option(help: "IAP_TLS_CERT_FILE: PEM certificate chain; with IAP_TLS_KEY_FILE the intake speaks HTTPS itself") var tlsCertFile: String?
    @Option(help: "IAP_TLS_KEY_FILE: PEM private key of IAP_TLS_CERT_FILE") var tlsKeyFile: String?
    @Option(help: "IAP_RATE_PER_KEY: new submissions a second per client key, fleet-wide (default 0: no limit)") var ratePerKey: String?
    @Option(help: "IAP_RATE_PER_USER: new submissions a second per user, fleet-wide (default 0: no limit)") var ratePerUser: String?

    public init() {}

    public var flags: [String: String?] {
        [
            "IAP_HTTP_HOST": httpHost, "IAP_HTTP_PORT": httpPort, "IAP_MAX_BODY_BYTES": maxBodyBytes, "IAP_APPLE_APP_ID": appleAppId,
            "IAP_CLIENT_KEYS_FILE": clientKeysFile, "IAP_RATE_PER_KEY": ratePerKey, "IAP_RATE_PER_USER": ratePerUser,
            "IAP_TLS_CERT_FILE": tlsCertFile, "IAP_TLS_KEY_FILE": tlsKeyFile,
        ]
    }
}
