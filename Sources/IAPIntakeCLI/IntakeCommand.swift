import ArgumentParser
import IAPCLI
import Hummingbird
import HummingbirdTLS
import IAPIntake
import PipelineCore
import IAPStages
import IAPOperations
import RedisClient
import ServiceLifecycle

package struct IntakeCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "iap-intake", abstract: "HTTP intake: accepts receipts, answers with tickets.")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var replication: ReplicationOptions
    @OptionGroup var intake: IntakeOptions
    @OptionGroup var appAppleID: AppAppleIDOptions
    @OptionGroup var tickets: TicketOptions
    @OptionGroup var apps: AppOptions
    @OptionGroup var serverAPIKey: ServerAPIKeyOptions
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var offerKey: OfferKeyOptions
    package init() {}

    package func run() async throws {
        let configuration = loadConfiguration(of: self)
        do {
            try IntakeExposure.check(configuration)
        } catch {
            failConfiguration(error)
        }
        let logger = bootstrapLogging(label: "iap-intake")
        warnOfExposedSecretFiles(configuration, logger: logger)
        let redisClient = configuration.redis.client()
        await EvictionPolicyCheck.run(redisClient, logger: logger)
        let store = PipelineStore(redis: redisClient, keys: configuration.keys, replication: configuration.redis.replication)
        let notifications: NotificationAdmission?
        let tls: TLSConfiguration?
        let support: SupportLookup?
        do {
            notifications = try NotificationAdmission.make(configuration, store: store)
            tls = try IntakeApplication.tlsConfiguration(configuration)
            support = try SupportLookup.make(configuration, store: store, logger: logger)
        } catch {
            failConfiguration(error)
        }
        if notifications == nil {
            logger.warning("IAP_BUNDLE_IDS is not set: Server Notifications are answered 503 until it is")
        }
        var keyring: ClientKeyring?
        if let file = configuration.intake.clientKeysFile {
            do {
                keyring = try ClientKeyring(file: file)
            } catch {
                failConfiguration(error)
            }
            logger.info("requests must be signed", metadata: ["keys": "\(keyring?.current.ids.count ?? 0)"])
        } else {
            logger.warning("IAP_CLIENT_KEYS_FILE is not set: the intake serves anyone who can reach it")
        }
        let registry = bootstrapMetrics()
        // Once callers must sign, the metrics are not theirs to read: only on their own listener.
        if keyring != nil && configuration.metricsPort == nil {
            logger.notice("/metrics is not served on the intake's port while IAP_CLIENT_KEYS_FILE is set: set IAP_METRICS_PORT to scrape it")
        }
        let app = try IntakeApplication.make(
            store: store, configuration: configuration, notifications: notifications, clientKeys: keyring, tls: tls,
            metrics: .init(text: metricsText), support: support, logger: logger
        ) { port in
            logger.info(
                "intake listening", metadata: ["host": "\(configuration.httpHost)", "port": "\(port)", "tls": "\(tls != nil)"])
        }
        // The group owns the Redis client: the server stops first, then the client closes.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: ClosingService { await redisClient.close() })]
        if let support { services.append(.init(service: ClosingService { await support.shutdown() })) }
        if let keyring {
            services.append(.init(service: await HangupReloader("client keys", logger: logger) { "\(try keyring.reload().ids.count) keys" }))
        }
        if let port = configuration.metricsPort {
            services.append(.init(service: MetricsServer(registry: registry, host: configuration.httpHost, port: port, logger: logger)))
        }
        services.append(.init(service: app))
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
