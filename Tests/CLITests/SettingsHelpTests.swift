import ArgumentParser
import IAPCLI
@testable import IAPControlCLI
import IAPIntakeCLI
import IAPWorkerCLI
import Testing

/// Each command's `--help` lists the settings it reads, and only those.
@Suite struct SettingsHelpTests {
    static let redis: Set = ["IAP_REDIS_URL", "IAP_PREFIX", "IAP_REDIS_POOL_SIZE"]
    static let replication: Set = ["IAP_REDIS_MIN_REPLICAS", "IAP_REDIS_REPLICA_TIMEOUT_MS"]
    static let worker: Set = ["IAP_CONCURRENCY", "IAP_MAX_REDELIVERIES", "IAP_SHUTDOWN_GRACE_MS", "IAP_LEASE_MS", "IAP_METRICS_PORT"]
    static let serverAPIKey: Set = ["IAP_APPLE_API_KEY_ID", "IAP_APPLE_API_ISSUER_ID", "IAP_APPLE_API_PRIVATE_KEY_FILE"]
    static let apps: Set = ["IAP_BUNDLE_IDS", "IAP_APPLE_ROOT_CERTS"]
    static let recheck: Set = ["IAP_RECHECK_BEFORE_S", "IAP_RECHECK_AFTER_S", "IAP_RECHECK_MAX"]

    static func settings(in help: String) -> Set<String> {
        Set(help.matches(of: /IAP_[A-Z0-9_]+/).map { String($0.output) })
    }

    @Test func theIntakeListsItsServerTicketsAndNotificationChecks() {
        #expect(Self.settings(in: IntakeCommand.helpMessage()) == Self.redis.union(Self.replication).union(Self.apps).union(Self.serverAPIKey).union([
            "IAP_HTTP_HOST", "IAP_HTTP_PORT", "IAP_MAX_BODY_BYTES", "IAP_APPLE_APP_ID", "IAP_TICKET_TTL_S", "IAP_CLIENT_KEYS_FILE", "IAP_RATE_PER_KEY", "IAP_RATE_PER_USER", "IAP_TLS_CERT_FILE", "IAP_TLS_KEY_FILE",
            "IAP_PRODUCTS_FILE",
        ]))
    }

    @Test func theVerifierListsAppleAndRetries() {
        #expect(Self.settings(in: VerifierCommand.helpMessage()) == Self.redis.union(Self.worker).union(Self.apps).union(Self.serverAPIKey).union([
            "IAP_MAX_ATTEMPTS", "IAP_RETRY_BASE_MS", "IAP_RETRY_MAX_MS", "IAP_APPLE_PRODUCTION_URL", "IAP_APPLE_SANDBOX_URL",
            "IAP_APPLE_SHARED_SECRET", "IAP_APPLE_TIMEOUT_MS", "IAP_APPLE_API_PRODUCTION_URL", "IAP_APPLE_API_SANDBOX_URL",
            "IAP_APPLE_API_MAX_RPS", "IAP_TICKET_TTL_S",
        ]).union(Self.recheck))
    }

    @Test func theOtherStagesListOnlyRedisTheWorkerTheCatalogAndThePolicy() {
        #expect(Self.settings(in: DeduperCommand.helpMessage()) == Self.redis.union(Self.replication).union(Self.worker).union([
            "IAP_PRODUCTS_FILE", "IAP_CURRENCIES", "IAP_SANDBOX", "IAP_MAX_REFUNDS_PER_USER", "IAP_SHARING_POLICY",
        ]))
        #expect(Self.settings(in: NotifierCommand.helpMessage()) == Self.redis.union(Self.worker).union(Self.serverAPIKey).union([
            "IAP_PRODUCTS_FILE", "IAP_REFUND_PREFERENCE", "IAP_BUNDLE_IDS", "IAP_APPLE_TIMEOUT_MS", "IAP_MAX_ATTEMPTS",
            "IAP_RETRY_BASE_MS", "IAP_RETRY_MAX_MS", "IAP_APPLE_API_PRODUCTION_URL", "IAP_APPLE_API_SANDBOX_URL", "IAP_APPLE_API_MAX_RPS",
        ]).union(Self.recheck))
        #expect(Self.settings(in: GranterCommand.helpMessage()) == Self.redis.union(Self.replication).union(Self.worker).union(Self.recheck))
        #expect(Self.settings(in: WebhookCommand.helpMessage()) == Self.redis.union(Self.worker).union([
            "IAP_WEBHOOK_URL", "IAP_WEBHOOK_SECRET", "IAP_WEBHOOK_MAX_AGE_S", "IAP_WEBHOOK_TIMEOUT_MS", "IAP_MAX_ATTEMPTS",
            "IAP_RETRY_BASE_MS", "IAP_RETRY_MAX_MS",
        ]))
    }

    @Test func iapctlListsRedisAndWhatEachSubcommandReads() {
        #expect(Self.settings(in: ControlCommand.helpMessage(for: ControlCommand.self)).isEmpty)
        let all = Self.settings(in: ControlCommand.helpMessage(for: ControlCommand.Stats.self))
        #expect(all == Self.redis.union(["IAP_LEASE_MS"]))
        #expect(Self.settings(in: ControlCommand.helpMessage(for: HeldCommand.Release.self)) == Self.redis.union(Self.recheck))
        #expect(Self.settings(in: ControlCommand.helpMessage(for: RecheckCommand.self)) == Self.redis)
        #expect(Self.settings(in: ControlCommand.helpMessage(for: GrantCommand.self)) == Self.redis)
        #expect(Self.settings(in: ControlCommand.helpMessage(for: RevokeCommand.self)) == Self.redis)
        #expect(Self.settings(in: ControlCommand.helpMessage(for: UserCommand.self)) == Self.redis.union(["IAP_PRODUCTS_FILE"]))
    }

    /// The on-call commands refuse what they cannot do before touching Redis.
    @Test func onCallCommandsCheckTheirArguments() throws {
        #expect(throws: (any Error).self) { try GrantCommand.parse(["--user", "u", "--product", "p", "--id", "c", "--quantity", "0"]) }
        #expect(throws: (any Error).self) { try GrantCommand.parse(["--user", "u", "--product", "p"]) }
        #expect(throws: (any Error).self) { try ControlCommand.Dead.Replay.parse(["--reason", "retries_exhausted", "T1"]) }
        #expect(try ControlCommand.Dead.Replay.parse(["--all", "--reason", "unknown_product", "--dry-run"]).dryRun)
        #expect(try ControlCommand.Stats.parse(["--watch", "--json"]).watch)
    }

    /// An operator's decision names what it decides: units, or `--all` (optionally by reason).
    @Test func aHeldDecisionNeedsUnitsOrAll() throws {
        #expect(throws: (any Error).self) { try HeldCommand.Release.parse([]) }
        #expect(throws: (any Error).self) { try HeldCommand.Reject.parse(["--all", "u1"]) }
        #expect(throws: (any Error).self) { try HeldCommand.Release.parse(["--reason", "currency_unknown", "u1"]) }
        #expect(try HeldCommand.Release.parse(["--all", "--reason", "daily_limit_exceeded", "--by", "alice"]).decision.operatorName == "alice")
        #expect(try HeldCommand.Reject.parse(["u1", "u2", "--note", "chargeback"]).decision.ids == ["u1", "u2"])
    }

    @Test func aFlagWinsOverTheEnvironment() throws {
        let worker = try WorkerOptions.parse(["--concurrency", "7", "--shutdown-grace-ms", "10"])
        let redis = try RedisOptions.parse(["--prefix", "other"])
        let configuration = loadConfiguration(redis, worker)
        #expect(configuration.concurrency == 7)
        #expect(configuration.shutdownGraceMs == 10)
        #expect(configuration.keys.prefix == "other")
    }

    @Test func aCommandRefusesAFlagItDoesNotRead() {
        #expect(throws: (any Error).self) { try GranterCommand.parse(["--apple-shared-secret", "x"]) }
        #expect(throws: (any Error).self) { try IntakeCommand.parse(["--concurrency", "3"]) }
    }
}
