import ArgumentParser
import IAPCLI
import Hummingbird
import IAPIntake
import IAPPipeline
import RedisClient
import ServiceLifecycle

public struct IntakeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "iap-intake", abstract: "HTTP intake: accepts receipts, answers with tickets.")
    @OptionGroup var settings: SettingsOptions
    public init() {}

    public func run() async throws {
        let configuration = settings.load()
        let logger = bootstrapLogging(label: "iap-intake")
        let redis = RedisClient(configuration: configuration.redis, poolSize: configuration.redisPoolSize)
        let store = PipelineStore(redis: redis, keys: configuration.keys)
        let checks: NotificationRoutes.Checks?
        do {
            checks = try IntakeApplication.notificationChecks(configuration)
        } catch {
            SettingsOptions.fail(error)
        }
        if checks == nil {
            logger.warning("IAP_BUNDLE_IDS is not set: Server Notifications are answered 503 until it is")
        }
        let app = IntakeApplication.make(store: store, configuration: configuration, notificationChecks: checks, logger: logger) { port in
            logger.info("intake listening", metadata: ["host": "\(configuration.httpHost)", "port": "\(port)"])
        }
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        await redis.close()
    }
}
