import AppStoreServerAPI
import AppleJWS
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

/// What a stage command builds on the store: its handler, the clients the handler calls (Apple's,
/// the webhook's), closed after the worker stops, and services that run beside it (the sweeps).
struct StageParts {
    var handler: any JobHandler
    var clients: [ClosingService] = []
    var services: [any Service] = []
}

/// Runs one stage's worker until SIGTERM/SIGINT, then stops it gracefully. The service group owns
/// the Redis client and the parts' clients: the worker stops first, then they close, Redis last.
func runWorker(
    configuration: PipelineConfiguration, settings: WorkerSettings? = nil, logger: Logger,
    assemble: (PipelineStore) throws(ConfigurationError) -> StageParts
) async throws {
    warnOfExposedSecretFiles(configuration, logger: logger)
    let registry = bootstrapMetrics()
    let redis = configuration.redis.client()
    await EvictionPolicyCheck.run(redis, logger: logger)
    let store = PipelineStore(
        redis: redis, keys: configuration.keys, replication: configuration.redis.replication, recheck: configuration.recheck)
    let parts: StageParts
    do {
        parts = try assemble(store)
    } catch {
        failConfiguration(error)
    }
    let worker = StageWorkers(
        handler: parts.handler, store: store, settings: settings ?? configuration.worker, logger: logger)
    let metrics: [any Service] = configuration.metricsPort.map {
        [MetricsServer(registry: registry, host: configuration.httpHost, port: $0, logger: logger)]
    } ?? []
    // Stopped in reverse: the parts' services and the worker first, then the clients, Redis last.
    let services: [any Service] = [ClosingService { await redis.close() }] + parts.clients + metrics + [worker] + parts.services
    let group = ServiceGroup(
        configuration: .init(
            services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}

/// Closes each of Apple's Server API clients.
func closing(_ clients: [ServerAPIClient]) -> ClosingService {
    ClosingService { for client in clients { await client.shutdown() } }
}

package struct VerifierCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
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
    package init() {}

    package func run() async throws {
        let configuration = loadConfiguration(of: self)
        let logger = bootstrapLogging(label: "iap-verifier")
        try await runWorker(configuration: configuration, logger: logger) { (store) throws(ConfigurationError) -> StageParts in
            let apple = AppleVerifier(configuration: configuration.apple)
            // One client per app (its token's bid); with several apps, each is tried in turn.
            let clients = try configuration.serverAPIClients(store: store, maxConnections: configuration.worker.concurrency, logger: logger)
            let handler = try StageAssembly(configuration: configuration, store: store, logger: logger, apple: apple, clients: clients)
                .handler(for: .verify)
            return StageParts(
                handler: handler, clients: [ClosingService { await apple.shutdown() }, closing(clients.map(\.client))])
        }
    }
}

package struct DeduperCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "iap-deduper", abstract: "Dedupe stage: claims each purchase once, ever.")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var replication: ReplicationOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var lease: LeaseOptions
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var policy: PolicyOptions
    @OptionGroup var adoption: AdoptionOptions
    @OptionGroup var appleAccounts: AppleAccountOptions
    package init() {}

    package func run() async throws {
        let configuration = loadConfiguration(of: self)
        let logger = bootstrapLogging(label: "iap-deduper")
        try await runWorker(configuration: configuration, logger: logger) { (store) throws(ConfigurationError) -> StageParts in
            StageParts(handler: try StageAssembly(configuration: configuration, store: store, logger: logger).handler(for: .dedupe))
        }
    }
}

package struct GranterCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
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
    package init() {}

    package func run() async throws {
        let configuration = loadConfiguration(of: self)
        let logger = bootstrapLogging(label: "iap-granter")
        try await runWorker(configuration: configuration, logger: logger) { (store) throws(ConfigurationError) -> StageParts in
            StageParts(handler: try StageAssembly(configuration: configuration, store: store, logger: logger).handler(for: .grant))
        }
    }
}

package struct NotifierCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
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
    package init() {}

    package func run() async throws {
        let configuration = loadConfiguration(of: self)
        let logger = bootstrapLogging(label: "iap-notifier")
        try await runWorker(configuration: configuration, logger: logger) { (store) throws(ConfigurationError) -> StageParts in
            // One client per app (its token's bid): each call goes out with its purchase's app's key.
            let clients = try configuration.serverAPIClients(store: store, maxConnections: configuration.worker.concurrency, logger: logger)
            var parts = StageParts(
                handler: try StageAssembly(configuration: configuration, store: store, logger: logger, clients: clients).handler(for: .notify),
                clients: [closing(clients.map(\.client))])
            try addSweeps(to: &parts, configuration: configuration, store: store, logger: logger)
            return parts
        }
    }

    /// The notifier's standing sweeps, each with its own Server API clients.
    private func addSweeps(
        to parts: inout StageParts, configuration: PipelineConfiguration, store: PipelineStore, logger: Logger
    ) throws(ConfigurationError) {
        if let sweeper = try NotificationSweeper.make(configuration, store: store, logger: logger) {
            parts.clients.append(closing(sweeper.walks.map(\.walk.client)))
            logger.info("notification sweep on", metadata: ["every_s": "\(configuration.sweeps.notifications.components.seconds)"])
            parts.services.append(sweeper)
        }
        if let refunds = try RefundSweeper.make(configuration, store: store, logger: logger) {
            parts.clients.append(closing(refunds.audit.clients))
            logger.info("refund sweep on", metadata: ["every_s": "\(configuration.sweeps.refunds.components.seconds)"])
            parts.services.append(refunds)
        }
    }
}

package struct WebhookCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "iap-webhook",
        abstract: "Webhook stage: delivers every fulfilment event to each destination it is for, signed, in order per user.")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var lease: LeaseOptions
    @OptionGroup var retry: RetryOptions
    @OptionGroup var webhook: WebhookOptions
    package init() {}

    package func run() async throws {
        let configuration = loadConfiguration(of: self)
        let logger = bootstrapLogging(label: "iap-webhook")
        let destinations: [WebhookDestination]
        do {
            destinations = try configuration.webhook.required()
        } catch {
            failConfiguration(error)
        }
        let clients = WebhookClient.forEach(destinations, timeout: configuration.webhook.timeout, slots: configuration.worker.concurrency)
        logger.info("webhook destinations", metadata: ["destinations": "\(destinations.map(\.name).joined(separator: ","))"])
        var settings = configuration.worker
        // New events reach their users' lists within this.
        settings.housekeeping = .milliseconds(200)
        try await runWorker(configuration: configuration, settings: settings, logger: logger) {
            (store) throws(ConfigurationError) -> StageParts in
            StageParts(
                handler: try StageAssembly(configuration: configuration, store: store, logger: logger, webhooks: clients)
                    .handler(for: .webhook),
                clients: clients.values.map { client in ClosingService { await client.shutdown() } })
        }
    }
}
