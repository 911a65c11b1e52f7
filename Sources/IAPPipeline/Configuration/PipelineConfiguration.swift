import AppStoreServerAPI
import AppleJWS
import AppleReceipt
@preconcurrency import Crypto
import Foundation
import RedisClient
import X509

/// Every setting, read from `IAP_*` environment variables (flags set the same names).
/// Defaults are the documented ones; a malformed value is an error naming its variable.
public struct PipelineConfiguration: Sendable {
    public var redisURL = "redis://127.0.0.1:6379"
    public var redis: RedisConfiguration
    public var prefix = "iap"
    public var httpHost = "127.0.0.1"
    public var httpPort = 8080
    public var appleProductionURL = AppleVerifierConfiguration.productionURL
    public var appleSandboxURL = AppleVerifierConfiguration.sandboxURL
    public var appleSharedSecret: String?
    public var appleTimeoutMs = 15000
    /// Files of the roots signed data must chain to; empty: Apple Root CA - G3, built in.
    public var appleRootCertFiles: [String] = []
    public var bundleIDs: Set<String> = []
    /// `IAP_BUNDLE_IDS` in the order given: the first is the App Store Server API token's `bid`.
    public var bundleIDList: [String] = []
    /// The app's Apple id: production notifications for another `appAppleId` are refused. Unset: not checked.
    public var appleAppID: Int64?
    public var appleAPIProductionURL = ServerAPIConfiguration.productionURL
    public var appleAPISandboxURL = ServerAPIConfiguration.sandboxURL
    public var appleAPIKeyID: String?
    public var appleAPIIssuerID: String?
    public var appleAPIPrivateKeyFile: String?
    /// Calls per second to each Server API endpoint, fleet-wide, in production (sandbox: a tenth).
    public var appleAPIMaxRPS = 50
    public var productsFile: String?
    public var concurrency = 64
    public var maxAttempts = 12
    public var retryBaseMs = 1000
    public var retryMaxMs = 600_000
    public var leaseMs = 30000
    public var maxRedeliveries = 5
    public var ticketTTLSeconds = 7 * 24 * 3600
    public var maxBodyBytes = 256 * 1024
    /// JSON file of the game backends' keys (key id → secret); set: every request to
    /// `/v1/receipts*` and `/v1/users/*` must be signed with one.
    public var clientKeysFile: String?
    /// New submissions a second, fleet-wide, per client key and per user; 0: no limit.
    public var ratePerKey = 0
    public var ratePerUser = 0
    /// PEM files of the intake's own TLS certificate chain and private key (both or neither).
    public var tlsCertFile: String?
    public var tlsKeyFile: String?
    /// The purchase policy's settings (see `purchasePolicy()`): ISO 4217 codes, empty: any.
    public var currencies: [String] = []
    /// `allow`, `deny`, or the path of a file of user ids allowed to use the sandbox.
    public var sandbox = "allow"
    /// 0: no limit.
    public var maxRefundsPerUser = 0
    public var sharingPolicy = SharingPolicy.bind
    /// What the notifier tells Apple it prefers when a customer asks for a refund
    /// (`IAP_REFUND_PREFERENCE`); `nil` (`none`): it does not answer consumption requests.
    public var refundPreference: ConsumptionInformation.RefundPreference?
    /// When subscriptions are re-checked with Apple (`IAP_RECHECK_BEFORE_S`, `IAP_RECHECK_AFTER_S`, `IAP_RECHECK_MAX`).
    public var recheck = RecheckSchedule.standard
    /// `iap-webhook`: where to deliver the fulfilment events, the shared signing secret, how long
    /// an event is retried, and each POST's timeout.
    public var webhookURL: String?
    public var webhookSecret: String?
    public var webhookMaxAge: Duration = .seconds(3 * 86400)
    public var webhookTimeoutMs = 10000
    public var shutdownGraceMs = 25000
    /// A stage worker's `/metrics` port; `nil`: none (the intake serves `/metrics` on its own port).
    public var metricsPort: Int?
    public var redisPoolSize = 2
    /// Replicas that must confirm an acknowledged write (`WAIT`); 0: none.
    public var redisMinReplicas = 0
    public var redisReplicaTimeoutMs = 1000

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigurationError) {
        let env = environment.filter { $0.key.hasPrefix("IAP_") && !$0.value.isEmpty }
        if let url = env["IAP_REDIS_URL"] { redisURL = url }
        do {
            redis = try RedisConfiguration(url: redisURL)
        } catch {
            throw ConfigurationError("IAP_REDIS_URL", "\(error)")
        }
        if let value = env["IAP_PREFIX"] {
            guard !value.contains(where: { $0 == " " || $0.isNewline }) else {
                throw ConfigurationError("IAP_PREFIX", "must not contain spaces")
            }
            prefix = value
        }
        if let value = env["IAP_HTTP_HOST"] { httpHost = value }
        httpPort = try Self.int(env, "IAP_HTTP_PORT", default: httpPort, in: 0...65535)
        appleProductionURL = try Self.url(env, "IAP_APPLE_PRODUCTION_URL", default: appleProductionURL)
        appleSandboxURL = try Self.url(env, "IAP_APPLE_SANDBOX_URL", default: appleSandboxURL)
        appleSharedSecret = env["IAP_APPLE_SHARED_SECRET"]
        appleTimeoutMs = try Self.int(env, "IAP_APPLE_TIMEOUT_MS", default: appleTimeoutMs, in: 100...600_000)
        if let list = env["IAP_APPLE_ROOT_CERTS"] {
            appleRootCertFiles = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        if let list = env["IAP_BUNDLE_IDS"] {
            bundleIDList = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            bundleIDs = Set(bundleIDList)
        }
        if let text = env["IAP_APPLE_APP_ID"] {
            guard let id = Int64(text.trimmingCharacters(in: .whitespaces)), id > 0 else {
                throw ConfigurationError("IAP_APPLE_APP_ID", "'\(text)' is not an App Store app id (a positive number)")
            }
            appleAppID = id
        }
        appleAPIProductionURL = try Self.url(env, "IAP_APPLE_API_PRODUCTION_URL", default: appleAPIProductionURL)
        appleAPISandboxURL = try Self.url(env, "IAP_APPLE_API_SANDBOX_URL", default: appleAPISandboxURL)
        appleAPIKeyID = env["IAP_APPLE_API_KEY_ID"]
        appleAPIIssuerID = env["IAP_APPLE_API_ISSUER_ID"]
        appleAPIPrivateKeyFile = env["IAP_APPLE_API_PRIVATE_KEY_FILE"]
        let apiKeys = [
            ("IAP_APPLE_API_KEY_ID", appleAPIKeyID), ("IAP_APPLE_API_ISSUER_ID", appleAPIIssuerID),
            ("IAP_APPLE_API_PRIVATE_KEY_FILE", appleAPIPrivateKeyFile),
        ]
        if apiKeys.contains(where: { $0.1 != nil }), let missing = apiKeys.first(where: { $0.1 == nil }) {
            throw ConfigurationError(
                missing.0, "required with the other App Store Server API settings (key id, issuer id, private key file)")
        }
        appleAPIMaxRPS = try Self.int(env, "IAP_APPLE_API_MAX_RPS", default: appleAPIMaxRPS, in: 1...10_000)
        productsFile = env["IAP_PRODUCTS_FILE"]
        concurrency = try Self.int(env, "IAP_CONCURRENCY", default: concurrency, in: 1...10_000)
        maxAttempts = try Self.int(env, "IAP_MAX_ATTEMPTS", default: maxAttempts, in: 1...1000)
        retryBaseMs = try Self.int(env, "IAP_RETRY_BASE_MS", default: retryBaseMs, in: 1...86_400_000)
        retryMaxMs = try Self.int(env, "IAP_RETRY_MAX_MS", default: retryMaxMs, in: 1...86_400_000)
        guard retryMaxMs >= retryBaseMs else {
            throw ConfigurationError("IAP_RETRY_MAX_MS", "must be at least IAP_RETRY_BASE_MS (\(retryBaseMs))")
        }
        leaseMs = try Self.int(env, "IAP_LEASE_MS", default: leaseMs, in: 1000...3_600_000)
        maxRedeliveries = try Self.int(env, "IAP_MAX_REDELIVERIES", default: maxRedeliveries, in: 0...1000)
        ticketTTLSeconds = try Self.int(env, "IAP_TICKET_TTL_S", default: ticketTTLSeconds, in: 60...31_536_000)
        maxBodyBytes = try Self.int(env, "IAP_MAX_BODY_BYTES", default: maxBodyBytes, in: 1024...64 << 20)
        clientKeysFile = env["IAP_CLIENT_KEYS_FILE"]
        ratePerKey = try Self.int(env, "IAP_RATE_PER_KEY", default: ratePerKey, in: 0...1_000_000)
        ratePerUser = try Self.int(env, "IAP_RATE_PER_USER", default: ratePerUser, in: 0...1_000_000)
        tlsCertFile = env["IAP_TLS_CERT_FILE"]
        tlsKeyFile = env["IAP_TLS_KEY_FILE"]
        if (tlsCertFile == nil) != (tlsKeyFile == nil) {
            throw ConfigurationError(
                tlsCertFile == nil ? "IAP_TLS_CERT_FILE" : "IAP_TLS_KEY_FILE", "required with the other (the intake's TLS certificate and key)")
        }
        recheck = RecheckSchedule(
            before: try Self.seconds(env, "IAP_RECHECK_BEFORE_S", default: recheck.before),
            after: try Self.seconds(env, "IAP_RECHECK_AFTER_S", default: recheck.after),
            maxTries: try Self.int(env, "IAP_RECHECK_MAX", default: recheck.maxTries, in: 0...100))
        if env["IAP_WEBHOOK_URL"] != nil { webhookURL = try Self.url(env, "IAP_WEBHOOK_URL", default: "") }
        if let secret = env["IAP_WEBHOOK_SECRET"] {
            guard secret.utf8.count >= 16 else { throw ConfigurationError("IAP_WEBHOOK_SECRET", "must be at least 16 bytes") }
            webhookSecret = secret
        }
        webhookMaxAge = .seconds(try Self.int(env, "IAP_WEBHOOK_MAX_AGE_S", default: Int(webhookMaxAge / .seconds(1)), in: 1...2_592_000))
        webhookTimeoutMs = try Self.int(env, "IAP_WEBHOOK_TIMEOUT_MS", default: webhookTimeoutMs, in: 100...120_000)
        if let list = env["IAP_CURRENCIES"] {
            currencies = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }.filter { !$0.isEmpty }
            if let bad = currencies.first(where: { !PurchasePolicy.isCurrencyCode($0) }) {
                throw ConfigurationError("IAP_CURRENCIES", "'\(bad)' is not an ISO 4217 currency code (three letters, like USD)")
            }
        }
        if let value = env["IAP_SANDBOX"] { sandbox = value.trimmingCharacters(in: .whitespaces) }
        maxRefundsPerUser = try Self.int(env, "IAP_MAX_REFUNDS_PER_USER", default: maxRefundsPerUser, in: 0...1_000_000)
        if let text = env["IAP_SHARING_POLICY"] {
            guard let policy = SharingPolicy(rawValue: text.lowercased()) else {
                throw ConfigurationError("IAP_SHARING_POLICY", "'\(text)' is not bind, transfer or share")
            }
            sharingPolicy = policy
        }
        if let text = env["IAP_REFUND_PREFERENCE"], text.lowercased() != "none" {
            guard let preference = ConsumptionInformation.RefundPreference(rawValue: text.uppercased()) else {
                throw ConfigurationError("IAP_REFUND_PREFERENCE", "'\(text)' is not none, decline, grant_full or grant_prorated")
            }
            refundPreference = preference
        }
        if env["IAP_METRICS_PORT"] != nil { metricsPort = try Self.int(env, "IAP_METRICS_PORT", default: 0, in: 1...65535) }
        shutdownGraceMs = try Self.int(env, "IAP_SHUTDOWN_GRACE_MS", default: shutdownGraceMs, in: 0...3_600_000)
        redisPoolSize = try Self.int(env, "IAP_REDIS_POOL_SIZE", default: redisPoolSize, in: 1...256)
        redisMinReplicas = try Self.int(env, "IAP_REDIS_MIN_REPLICAS", default: redisMinReplicas, in: 0...64)
        // Below the Redis client's command timeout (5 s): a WAIT must never look like a dead connection.
        redisReplicaTimeoutMs = try Self.int(env, "IAP_REDIS_REPLICA_TIMEOUT_MS", default: redisReplicaTimeoutMs, in: 1...4000)
    }

    /// What acknowledged writes wait for; `nil` when `IAP_REDIS_MIN_REPLICAS` is 0.
    public var replication: RedisReplication? {
        redisMinReplicas > 0 ? RedisReplication(replicas: redisMinReplicas, timeoutMs: redisReplicaTimeoutMs) : nil
    }

    public var keys: RedisKeys { RedisKeys(prefix: prefix) }

    public var apple: AppleVerifierConfiguration {
        AppleVerifierConfiguration(
            productionURL: appleProductionURL, sandboxURL: appleSandboxURL, sharedSecret: appleSharedSecret,
            timeoutMs: appleTimeoutMs, maxConnections: concurrency)
    }

    public var retryPolicy: RetryPolicy {
        RetryPolicy(baseMs: retryBaseMs, maxMs: retryMaxMs, maxAttempts: maxAttempts)
    }

    /// The verifier refuses to start without the app's bundle ids: it would accept any app's receipts.
    public func requireBundleIDs() throws(ConfigurationError) -> Set<String> {
        guard !bundleIDs.isEmpty else {
            throw ConfigurationError("IAP_BUNDLE_IDS", "required: the comma-separated bundle ids of your apps")
        }
        return bundleIDs
    }

    /// Whether App Store Server API keys are set (a `transaction_id` alone can then be looked up).
    public var isServerAPIConfigured: Bool {
        appleAPIKeyID != nil && appleAPIIssuerID != nil && appleAPIPrivateKeyFile != nil
    }

    /// The Server API settings with the private key read, or `nil` when no keys are set.
    public func serverAPI() throws(ConfigurationError) -> ServerAPIConfiguration? {
        guard let keyID = appleAPIKeyID, let issuerID = appleAPIIssuerID, let path = appleAPIPrivateKeyFile else { return nil }
        guard let pem = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else {
            throw ConfigurationError("IAP_APPLE_API_PRIVATE_KEY_FILE", "cannot read \(path)")
        }
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ConfigurationError("IAP_APPLE_API_PRIVATE_KEY_FILE", "\(path) is not a P-256 private key in PEM (.p8)")
        }
        guard let bundleID = bundleIDList.first else {
            throw ConfigurationError("IAP_BUNDLE_IDS", "required with the App Store Server API: its first id is the token's bid")
        }
        return ServerAPIConfiguration(
            productionURL: appleAPIProductionURL, sandboxURL: appleAPISandboxURL, keyID: keyID, issuerID: issuerID,
            privateKey: key, bundleID: bundleID, timeout: .milliseconds(appleTimeoutMs))
    }

    /// The roots that signed data must chain to: the configured files, else Apple Root CA - G3.
    public func rootCertificates() throws(ConfigurationError) -> [Certificate] {
        guard !appleRootCertFiles.isEmpty else { return [AppleRootCertificates.appleRootCAG3] }
        do {
            return try AppleRootCertificates.load(paths: appleRootCertFiles)
        } catch {
            throw ConfigurationError("IAP_APPLE_ROOT_CERTS", "\(error)")
        }
    }

    /// The deduper refuses to start without a catalog: the product type decides what is granted once.
    public func requireCatalog() throws(ConfigurationError) -> ProductCatalog {
        guard let path = productsFile else {
            throw ConfigurationError("IAP_PRODUCTS_FILE", "required: path of the products JSON file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("IAP_PRODUCTS_FILE", "cannot read \(path)")
        }
        do {
            return try ProductCatalog(json: data)
        } catch {
            throw ConfigurationError("IAP_PRODUCTS_FILE", "\(path) is not a products file: \(error)")
        }
    }

    /// The webhook's URL and secret, both required by `iap-webhook`.
    public func requireWebhook() throws(ConfigurationError) -> (url: String, secret: String) {
        guard let webhookURL else { throw ConfigurationError("IAP_WEBHOOK_URL", "required: where iap-webhook delivers the events") }
        guard let webhookSecret else {
            throw ConfigurationError("IAP_WEBHOOK_SECRET", "required: the secret the deliveries are signed with (at least 16 bytes)")
        }
        return (webhookURL, webhookSecret)
    }

    /// The purchase policy, with `IAP_SANDBOX`'s file of users read (one id a line; `#` starts a comment).
    public func purchasePolicy() throws(ConfigurationError) -> PurchasePolicy {
        let sandboxPolicy: PurchasePolicy.Sandbox
        switch sandbox.lowercased() {
        case "allow": sandboxPolicy = .allow
        case "deny": sandboxPolicy = .deny
        default:
            guard let data = FileManager.default.contents(atPath: sandbox) else {
                throw ConfigurationError("IAP_SANDBOX", "must be allow, deny or a readable file of user ids; cannot read \(sandbox)")
            }
            let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            let users = lines.map { line in
                String(line.prefix { $0 != "#" }).trimmingCharacters(in: .whitespaces)
            }.filter { !$0.isEmpty }
            sandboxPolicy = .users(Set(users))
        }
        return PurchasePolicy(
            currencies: currencies.isEmpty ? nil : Set(currencies), sandbox: sandboxPolicy,
            maxRefundsPerUser: maxRefundsPerUser == 0 ? nil : maxRefundsPerUser, sharing: sharingPolicy)
    }

    private static func int(
        _ env: [String: String], _ name: String, default value: Int, in range: ClosedRange<Int>
    ) throws(ConfigurationError) -> Int {
        guard let text = env[name] else { return value }
        guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
            throw ConfigurationError(name, "'\(text)' is not a whole number")
        }
        guard range.contains(number) else {
            throw ConfigurationError(name, "\(number) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// Seconds, decimals allowed (`0.5`), within 0 and 30 days.
    private static func seconds(_ env: [String: String], _ name: String, default value: Duration) throws(ConfigurationError) -> Duration {
        guard let text = env[name] else { return value }
        guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else {
            throw ConfigurationError(name, "'\(text)' is not a number of seconds")
        }
        guard (0...2_592_000).contains(number) else { throw ConfigurationError(name, "\(text) is outside 0...2592000 seconds") }
        return .milliseconds(Int64((number * 1000).rounded()))
    }

    private static func url(_ env: [String: String], _ name: String, default value: String) throws(ConfigurationError) -> String {
        guard let text = env[name] else { return value }
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ConfigurationError(name, "'\(text)' is not an http(s) URL")
        }
        return text
    }
}
