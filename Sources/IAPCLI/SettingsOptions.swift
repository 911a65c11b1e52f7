import ArgumentParser
import Foundation
import IAPPipeline

/// Every `IAP_*` setting as a flag; a flag wins over the environment variable of the same name.
public struct SettingsOptions: ParsableArguments {
    @Option(help: "IAP_REDIS_URL: redis://[:password@]host[:port][/db] or unix:///path.sock") var redisUrl: String?
    @Option(help: "IAP_PREFIX: key prefix (default iap)") var prefix: String?
    @Option(help: "IAP_HTTP_HOST (default 127.0.0.1)") var httpHost: String?
    @Option(help: "IAP_HTTP_PORT (default 8080)") var httpPort: String?
    @Option(help: "IAP_APPLE_PRODUCTION_URL") var appleProductionUrl: String?
    @Option(help: "IAP_APPLE_SANDBOX_URL") var appleSandboxUrl: String?
    @Option(help: "IAP_APPLE_SHARED_SECRET (prefer the environment: flags show in ps)") var appleSharedSecret: String?
    @Option(help: "IAP_APPLE_TIMEOUT_MS (default 15000)") var appleTimeoutMs: String?
    @Option(help: "IAP_APPLE_ROOT_CERTS: comma-separated PEM/DER root files for signed data (default: Apple Root CA - G3)")
    var appleRootCerts: String?
    @Option(help: "IAP_BUNDLE_IDS: comma-separated bundle ids") var bundleIds: String?
    @Option(help: "IAP_APPLE_APP_ID: the app's Apple id; production notifications for another are refused") var appleAppId: String?
    @Option(help: "IAP_APPLE_API_PRODUCTION_URL (default https://api.storekit.apple.com)") var appleApiProductionUrl: String?
    @Option(help: "IAP_APPLE_API_SANDBOX_URL (default https://api.storekit-sandbox.apple.com)") var appleApiSandboxUrl: String?
    @Option(help: "IAP_APPLE_API_KEY_ID: App Store Server API key id") var appleApiKeyId: String?
    @Option(help: "IAP_APPLE_API_ISSUER_ID: App Store Server API issuer id") var appleApiIssuerId: String?
    @Option(help: "IAP_APPLE_API_PRIVATE_KEY_FILE: the .p8 key (PEM)") var appleApiPrivateKeyFile: String?
    @Option(help: "IAP_APPLE_API_MAX_RPS: Server API calls/s per endpoint, fleet-wide (default 50; sandbox a tenth)")
    var appleApiMaxRps: String?
    @Option(help: "IAP_PRODUCTS_FILE: products JSON") var productsFile: String?
    @Option(help: "IAP_CONCURRENCY (default 64)") var concurrency: String?
    @Option(help: "IAP_MAX_ATTEMPTS (default 12)") var maxAttempts: String?
    @Option(help: "IAP_RETRY_BASE_MS (default 1000)") var retryBaseMs: String?
    @Option(help: "IAP_RETRY_MAX_MS (default 600000)") var retryMaxMs: String?
    @Option(help: "IAP_LEASE_MS (default 30000)") var leaseMs: String?
    @Option(help: "IAP_MAX_REDELIVERIES (default 5)") var maxRedeliveries: String?
    @Option(help: "IAP_TICKET_TTL_S (default 604800)") var ticketTtlS: String?
    @Option(help: "IAP_MAX_BODY_BYTES (default 262144)") var maxBodyBytes: String?
    @Option(help: "IAP_SHUTDOWN_GRACE_MS (default 25000)") var shutdownGraceMs: String?
    @Option(help: "IAP_REDIS_POOL_SIZE (default 2)") var redisPoolSize: String?

    public init() {}

    var flags: [String: String?] {
        [
            "IAP_REDIS_URL": redisUrl, "IAP_PREFIX": prefix, "IAP_HTTP_HOST": httpHost, "IAP_HTTP_PORT": httpPort,
            "IAP_APPLE_PRODUCTION_URL": appleProductionUrl, "IAP_APPLE_SANDBOX_URL": appleSandboxUrl,
            "IAP_APPLE_SHARED_SECRET": appleSharedSecret, "IAP_APPLE_TIMEOUT_MS": appleTimeoutMs,
            "IAP_APPLE_ROOT_CERTS": appleRootCerts, "IAP_BUNDLE_IDS": bundleIds, "IAP_APPLE_APP_ID": appleAppId,
            "IAP_APPLE_API_PRODUCTION_URL": appleApiProductionUrl, "IAP_APPLE_API_SANDBOX_URL": appleApiSandboxUrl,
            "IAP_APPLE_API_KEY_ID": appleApiKeyId, "IAP_APPLE_API_ISSUER_ID": appleApiIssuerId,
            "IAP_APPLE_API_PRIVATE_KEY_FILE": appleApiPrivateKeyFile, "IAP_APPLE_API_MAX_RPS": appleApiMaxRps, "IAP_PRODUCTS_FILE": productsFile, "IAP_CONCURRENCY": concurrency,
            "IAP_MAX_ATTEMPTS": maxAttempts, "IAP_RETRY_BASE_MS": retryBaseMs, "IAP_RETRY_MAX_MS": retryMaxMs,
            "IAP_LEASE_MS": leaseMs, "IAP_MAX_REDELIVERIES": maxRedeliveries, "IAP_TICKET_TTL_S": ticketTtlS,
            "IAP_MAX_BODY_BYTES": maxBodyBytes, "IAP_SHUTDOWN_GRACE_MS": shutdownGraceMs,
            "IAP_REDIS_POOL_SIZE": redisPoolSize,
        ]
    }

    /// The configuration, or the process stops with one line naming the bad variable.
    public func load() -> PipelineConfiguration {
        var environment = ProcessInfo.processInfo.environment
        for case let (name, value?) in flags { environment[name] = value }
        do {
            return try PipelineConfiguration(environment: environment)
        } catch {
            Self.fail(error)
        }
    }

    public static func fail(_ error: ConfigurationError) -> Never {
        FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
        Foundation.exit(2)
    }
}
