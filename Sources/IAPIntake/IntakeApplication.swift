import Hummingbird
import IAPPipeline
import Logging

/// Builds the intake's Hummingbird application.
public enum IntakeApplication {
    public static func make(
        store: PipelineStore, configuration: PipelineConfiguration, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router()
        IntakeRoutes(
            store: store, maxBodyBytes: configuration.maxBodyBytes, ticketTTLSeconds: configuration.ticketTTLSeconds,
            serverAPIConfigured: configuration.isServerAPIConfigured
        ).register(on: router)
        return Application(
            router: router,
            configuration: .init(address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "iap-intake"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }
}
