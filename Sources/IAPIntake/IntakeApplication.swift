import AppleJWS
import Hummingbird
import IAPPipeline
import Logging

/// Builds the intake's Hummingbird application.
public enum IntakeApplication {
    /// `notificationChecks`: how notifications are verified (see `notificationChecks(_:)`);
    /// `clientKeys`: the game backends that may call it (`nil`: anyone).
    public static func make(
        store: PipelineStore, configuration: PipelineConfiguration, notificationChecks: NotificationRoutes.Checks?,
        clientKeys: ClientKeyring? = nil, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router()
        // Before the routes: a route takes the middleware added before it.
        if let clientKeys {
            router.add(middleware: RequestSignatureMiddleware(keyring: clientKeys, store: store, maxBodyBytes: configuration.maxBodyBytes))
        }
        NotificationRoutes(
            store: store, checks: notificationChecks, maxBodyBytes: configuration.maxBodyBytes,
            ticketTTLSeconds: configuration.ticketTTLSeconds
        ).register(on: router)
        IntakeRoutes(
            store: store, maxBodyBytes: configuration.maxBodyBytes, ticketTTLSeconds: configuration.ticketTTLSeconds,
            serverAPIConfigured: configuration.isServerAPIConfigured,
            limits: SubmissionLimits(perKey: configuration.ratePerKey, perUser: configuration.ratePerUser), signed: clientKeys != nil
        ).register(on: router)
        return Application(
            router: router,
            configuration: .init(address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "iap-intake"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// The checks notifications get from this configuration: its roots, bundle ids and app id;
    /// `nil` (notifications answered 503) without bundle ids.
    public static func notificationChecks(_ configuration: PipelineConfiguration) throws(ConfigurationError) -> NotificationRoutes.Checks? {
        guard !configuration.bundleIDs.isEmpty else { return nil }
        return NotificationRoutes.Checks(
            verifier: SignedDataVerifier(rootCertificates: try configuration.rootCertificates()),
            bundleIDs: configuration.bundleIDs, appAppleID: configuration.appleAppID)
    }
}
