import AppStoreServerAPI
import AppleJWS
import NIOConcurrencyHelpers
import AppleReceipt
import IAPCLI
import ArgumentParser
import IAPSettings
import PipelineCore
import IAPStages
import IAPOperations
import Logging
import RedisClient
import ServiceLifecycle

/// Runs one stage's worker until SIGTERM/SIGINT, then stops it gracefully. The service group owns
/// the Redis client and `clients` (Apple's): the worker stops first, then they close, Redis last.
func runWorker(
    label: String, configuration: PipelineConfiguration, settings: WorkerSettings? = nil, logger: Logger,
    makeHandler: (PipelineStore) throws(ConfigurationError) -> any JobHandler, clients: [ClosingService] = [],
    makeServices: (PipelineStore) throws(ConfigurationError) -> [any Service] = { _ in [] }
) async throws {
    warnOfExposedSecretFiles(configuration, logger: logger)
    let registry = bootstrapMetrics()
    let redis = RedisClient(configuration: configuration.redis, poolSize: configuration.redisPoolSize)
    await EvictionPolicyCheck.run(redis, logger: logger)
    let store = PipelineStore(
        redis: redis, keys: configuration.keys, replication: configuration.replication, recheck: configuration.recheck)
    let handler: any JobHandler
    let extra: [any Service]
    do {
        handler = try makeHandler(store)
        extra = try makeServices(store)
    } catch {
        failConfiguration(error)
    }
    let worker = StageWorkers(handler: handler, store: store, settings: settings ?? WorkerSettings(configuration), logger: logger)
    let metrics: [any Service] = configuration.metricsPort.map {
        [MetricsServer(registry: registry, host: configuration.httpHost, port: $0, logger: logger)]
    } ?? []
    // Stopped in reverse: the extra services and the worker first, then Apple's clients, Redis last.
    let services: [any Service] = [ClosingService { await redis.close() }] + clients + metrics + [worker] + extra
    let group = ServiceGroup(
        configuration: .init(
            services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}

public struct VerifierCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "iap-verifier", abstract: "Verify stage: asks Apple about each receipt, in parallel.")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var lease: LeaseOptions
    @OptionGroup var retry: RetryOptions
    @OptionGroup var breaker: AppleBreakerOptions
    @OptionGroup var apps: AppOptions
    @OptionGroup var receiptAPI: ReceiptAPIOptions
    @OptionGroup var serverAPIKey: ServerAPIKeyOptions
    @OptionGroup var serverAPIClient: ServerAPIClientOptions
    @OptionGroup var recheck: RecheckOptions
    @OptionGroup var tickets: TicketOptions
    @OptionGroup var appleAccounts: AppleAccountOptions
    public init() {}

    public func run() async throws {
        let configuration = loadConfiguration(
            redis, worker, lease, retry, breaker, apps, receiptAPI, serverAPIKey, serverAPIClient, recheck, tickets, appsFile, appleAccounts)
        let logger = bootstrapLogging(label: "iap-verifier")
        let apple = AppleVerifier(configuration: configuration.apple)
        let serverAPI = NIOLockedValueBox<[ServerAPIClient]>([])
        try await runWorker(label: "iap-verifier", configuration: configuration, logger: logger, makeHandler: {
            (store) throws(ConfigurationError) -> any JobHandler in
            let signedData = SignedDataVerifier(rootCertificates: try configuration.rootCertificates())
            // One client per app (its token's bid); with several apps, each is tried in turn.
            let clients = try configuration.serverAPIClients(store: store, maxConnections: configuration.concurrency, logger: logger)
            serverAPI.withLockedValue { $0 = clients.map(\.client) }
            let seams = configuration.appleSeams(apple: apple, clients: clients, signedData: signedData)
            return VerifyHandler(
                verifier: seams.verifier, signedData: signedData, lookup: seams.lookup, subscriptions: seams.subscriptions,
                bundleIDs: try configuration.requireBundleIDs(),
                retryPolicy: configuration.retryPolicy,
                rechecks: RecheckPromotion(schedule: configuration.recheck, ticketTTL: configuration.ticketTTL),
                appleAccounts: seams.appleAccounts,
                breaker: configuration.appleBreaker.map { AppleBreaker(store: store, settings: $0, logger: logger) })
        }, clients: [
            ClosingService { await apple.shutdown() },
            ClosingService { for client in serverAPI.withLockedValue({ $0 }) { await client.shutdown() } },
        ])
    }
}

public struct DeduperCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "iap-deduper", abstract: "Dedupe stage: claims each purchase once, ever.")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var replication: ReplicationOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var lease: LeaseOptions
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var policy: PolicyOptions
    @OptionGroup var appleAccounts: AppleAccountOptions
    public init() {}

    public func run() async throws {
        let configuration = loadConfiguration(redis, replication, worker, lease, catalog, policy, appsFile, appleAccounts)
        let logger = bootstrapLogging(label: "iap-deduper")
        try await runWorker(label: "iap-deduper", configuration: configuration, logger: logger, makeHandler: {
            (_) throws(ConfigurationError) -> any JobHandler in
            DedupeHandler(
                catalog: try configuration.requireCatalog(), policy: try configuration.purchasePolicy(),
                ticketTTL: configuration.ticketTTL)
        })
    }
}

public struct GranterCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "iap-granter", abstract: "Grant stage: records fulfilments and finishes tickets.")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var replication: ReplicationOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var lease: LeaseOptions
    @OptionGroup var recheck: RecheckOptions
    @OptionGroup var accountTokens: AccountTokenOptions
    @OptionGroup var serverAPIKey: ServerAPIKeyOptions
    @OptionGroup var tickets: TicketOptions
    @OptionGroup var retention: RetentionOptions
    public init() {}

    public func run() async throws {
        let configuration = loadConfiguration(
            redis, replication, worker, lease, recheck, accountTokens, serverAPIKey, tickets, appsFile, retention)
        let logger = bootstrapLogging(label: "iap-granter")
        try await runWorker(label: "iap-granter", configuration: configuration, logger: logger, makeHandler: {
            (_) throws(ConfigurationError) -> any JobHandler in
            GrantHandler(tokenTickets: configuration.appAccountTokenTickets, retention: RetentionSweep(settings: configuration.retention))
        })
    }
}

public struct NotifierCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "iap-notifier", abstract: "Notify stage: applies App Store Server Notifications (refunds, purchases Apple reports).")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var lease: LeaseOptions
    @OptionGroup var recheck: RecheckOptions
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var consumption: ConsumptionOptions
    @OptionGroup var retry: RetryOptions
    @OptionGroup var serverAPIKey: ServerAPIKeyOptions
    @OptionGroup var serverAPIClient: ServerAPIClientOptions
    @OptionGroup var sweep: NotificationSweepOptions
    @OptionGroup var appAppleID: AppAppleIDOptions
    @OptionGroup var tickets: TicketOptions
    public init() {}

    public func run() async throws {
        let configuration = loadConfiguration(
            redis, worker, lease, catalog, consumption, retry, serverAPIKey, serverAPIClient, recheck, sweep, appAppleID, tickets, appsFile)
        let logger = bootstrapLogging(label: "iap-notifier")
        let serverAPI = NIOLockedValueBox<[ServerAPIClient]>([])
        let sweepClients = NIOLockedValueBox<[ServerAPIClient]>([])
        try await runWorker(label: "iap-notifier", configuration: configuration, logger: logger, makeHandler: {
            (store) throws(ConfigurationError) -> any JobHandler in
            var answering: ConsumptionAnswering?
            var accountTokens: AccountTokenErrands?
            // One client per app (its token's bid): each call goes out with its purchase's app's key.
            let clients = try configuration.serverAPIClients(store: store, maxConnections: configuration.concurrency, logger: logger)
            if configuration.refundPreference != nil, clients.isEmpty {
                throw ConfigurationError(
                    "IAP_REFUND_PREFERENCE", "answering consumption requests needs the App Store Server API key (IAP_APPLE_API_*)")
            }
            if !clients.isEmpty {
                serverAPI.withLockedValue { $0 = clients.map(\.client) }
                let apps = AppByAppServerAPI(clients: clients)
                if let preference = configuration.refundPreference {
                    answering = ConsumptionAnswering(reporter: apps, preferences: preference, retryPolicy: configuration.retryPolicy)
                }
                accountTokens = AccountTokenErrands(setter: apps, retryPolicy: configuration.retryPolicy)
            }
            return NotifyHandler(catalog: try configuration.requireCatalog(), consumption: answering, accountTokens: accountTokens)
        }, clients: [
            ClosingService { for client in serverAPI.withLockedValue({ $0 }) { await client.shutdown() } },
            ClosingService { for client in sweepClients.withLockedValue({ $0 }) { await client.shutdown() } },
        ], makeServices: { (store) throws(ConfigurationError) -> [any Service] in
            var services: [any Service] = []
            if let sweeper = try NotificationSweeper.make(configuration, store: store, logger: logger) {
                sweepClients.withLockedValue { $0 += sweeper.walks.map(\.walk.client) }
                logger.info("notification sweep on", metadata: ["every_s": "\(configuration.notificationSweep.components.seconds)"])
                services.append(sweeper)
            }
            if let refunds = try RefundSweeper.make(configuration, store: store, logger: logger) {
                sweepClients.withLockedValue { $0 += refunds.audit.clients }
                logger.info("refund sweep on", metadata: ["every_s": "\(configuration.refundSweep.components.seconds)"])
                services.append(refunds)
            }
            return services
        })
    }
}

public struct WebhookCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "iap-webhook",
        abstract: "Webhook stage: delivers every fulfilment event to the game backend, signed, in order per user.")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var lease: LeaseOptions
    @OptionGroup var retry: RetryOptions
    @OptionGroup var webhook: WebhookOptions
    public init() {}

    public func run() async throws {
        let configuration = loadConfiguration(redis, worker, lease, retry, webhook)
        let logger = bootstrapLogging(label: "iap-webhook")
        let target: (url: String, secret: String)
        do {
            target = try configuration.requireWebhook()
        } catch {
            failConfiguration(error)
        }
        let client = WebhookClient(
            url: target.url, timeout: configuration.webhookTimeout, maxConnections: configuration.concurrency)
        var settings = WorkerSettings(configuration)
        // New events reach their users' lists within this.
        settings.housekeeping = .milliseconds(200)
        try await runWorker(label: "iap-webhook", configuration: configuration, settings: settings, logger: logger, makeHandler: {
            (_) throws(ConfigurationError) -> any JobHandler in
            WebhookHandler(
                poster: client, signer: try configuration.webhookSigner(), maxAge: configuration.webhookMaxAge,
                retryPolicy: configuration.retryPolicy)
        }, clients: [ClosingService { await client.shutdown() }])
    }
}
