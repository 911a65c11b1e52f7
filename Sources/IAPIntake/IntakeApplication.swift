import AppleJWS
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOCore
import IAPSettings
import PipelineCore
import IAPStages
import IAPOperations
import Logging

/// Builds the intake's Hummingbird application.
package enum IntakeApplication {
    /// `notifications`: how Apple's notifications are verified and stored (`NotificationAdmission.make`);
    /// `clientKeys`: the game backends that may call it (`nil`: anyone); `tls`: its own
    /// certificate (`nil`: plain HTTP, behind a proxy that terminates TLS); `support`: the support
    /// desk's look-ups at Apple (`nil`: those routes answer 503).
    package static func make(
        store: PipelineStore, configuration: PipelineConfiguration, notifications: NotificationAdmission?,
        clientKeys: ClientKeyring? = nil, tls: TLSConfiguration? = nil, waiters: TicketWaiters? = nil,
        metrics: Metrics? = nil, support: SupportLookup? = nil, timeouts: Timeouts = .standard, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        // One subscription to each bucket's results channel for every waiting client, run with the server.
        let waiters = waiters ?? TicketWaiters(redis: configuration.redis.connection, keys: store.keys, logger: logger)
        // A connection idle between requests (or whose headers never end) closes after `idle`; a
        // request not read whole within `read` of its head closes its connection (a dripped body).
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestReadTimeout(limit: timeouts.read)], idleTimeout: TimeAmount(timeouts.idle))
        let router = try routes(
            store: store, configuration: configuration, notifications: notifications, clientKeys: clientKeys,
            waiters: waiters, metrics: metrics, support: support)
        return Application(
            router: router,
            server: try tls.map { try .tls(.http1(configuration: http1), tlsConfiguration: $0) } ?? .http1(configuration: http1),
            configuration: .init(address: .hostname(configuration.httpHost, port: configuration.intake.httpPort), serverName: "iap-intake"),
            services: [
                waiters, IntakeAnnouncer(store: store, logger: logger),
                QueueSampler(store: store, every: metrics?.sampleEvery ?? .seconds(15), metrics: metrics != nil, logger: logger),
            ],
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// The intake's metrics: where `/metrics` reads the Prometheus text from, and how often the
    /// queues are sampled for it.
    /// Every route of the intake on one router: what `make` serves, and what the OpenAPI test
    /// compares the document with.
    package static func routes(
        store: PipelineStore, configuration: PipelineConfiguration, notifications: NotificationAdmission?,
        clientKeys: ClientKeyring?, waiters: TicketWaiters, metrics: Metrics?, support: SupportLookup? = nil
    ) throws -> Router<IntakeRequestContext> {
        let router = Router(context: IntakeRequestContext.self)
        // Before every route (a route takes the middleware added before it): the metrics count
        // every answer, refusals included; the door decides who may call the route matched.
        if metrics != nil { router.add(middleware: RequestMetricsMiddleware()) }
        router.add(middleware: RouteAccessMiddleware(authenticator: clientKeys.map {
            RequestAuthenticator(keyring: $0, store: store, maxBodyBytes: configuration.intake.maxBodyBytes)
        }))
        // Open, but only on an intake without client keys: with keys, callers must sign, and the
        // metrics are served on their own listener (IAP_METRICS_PORT) instead.
        if let metrics, clientKeys == nil {
            router.get("/metrics") { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                    body: .init(byteBuffer: ByteBuffer(bytes: metrics.text())))
            }
        }
        NotificationRoutes(store: store, admission: notifications, maxBodyBytes: configuration.intake.maxBodyBytes).register(on: router)
        let catalog = configuration.hasCatalog ? try configuration.requireCatalog() : nil
        EntitlementRoutes(store: store, catalog: catalog).register(on: router)
        UserRoutes(store: store).register(on: router)
        TimedGrantRoutes(store: store, catalog: catalog, maxBodyBytes: configuration.intake.maxBodyBytes).register(on: router)
        ReportRoutes(store: store).register(on: router)
        let signers = try configuration.offerSigners()
        OfferRoutes(
            signatures: catalog.map { OfferSignatures(store: store, catalog: $0, signers: signers, bundleIDs: configuration.bundleIDs) },
            maxBodyBytes: configuration.intake.maxBodyBytes
        ).register(on: router)
        RetentionRoutes(
            answers: try catalog.flatMap { catalog in
                try notifications.map {
                    try RetentionAnswers.make(configuration, catalog: catalog, verifier: $0.verifier, signers: signers, store: store)
                }
            },
            maxBodyBytes: configuration.intake.maxBodyBytes
        ).register(on: router)
        SupportRoutes(lookup: support, signed: clientKeys != nil).register(on: router)
        IntakeRoutes(
            store: store, maxBodyBytes: configuration.intake.maxBodyBytes, ticketTTL: configuration.ticketTTL,
            serverAPIConfigured: configuration.isServerAPIConfigured, bundleIDs: configuration.bundleIDs,
            limits: SubmissionLimits(
                perKey: configuration.intake.ratePerKey, perUser: configuration.intake.ratePerUser, maxQueueDepth: configuration.intake.maxQueueDepth),
            waiters: waiters, maxWaitingPerKey: configuration.intake.maxWaitingPerKey
        ).register(on: router)
        return router
    }

    /// How long a connection may idle between requests, and how long a request may take to arrive whole.
    package struct Timeouts: Sendable {
        package var idle: Duration
        package var read: Duration

        /// 75 s idle (longer than the longest `?wait=` and a proxy's keep-alive), 30 s to read a request.
        package static let standard = Timeouts(idle: .seconds(75), read: .seconds(30))
    }

    package struct Metrics: Sendable {
        package var text: @Sendable () -> [UInt8]
        package var sampleEvery: Duration

        package init(sampleEvery: Duration = .seconds(5), text: @escaping @Sendable () -> [UInt8]) {
            self.text = text
            self.sampleEvery = sampleEvery
        }
    }

    /// The intake's own TLS from `IAP_TLS_CERT_FILE` and `IAP_TLS_KEY_FILE`; `nil` when unset.
    package static func tlsConfiguration(_ configuration: PipelineConfiguration) throws(ConfigurationError) -> TLSConfiguration? {
        guard let certFile = configuration.intake.tlsCertFile, let keyFile = configuration.intake.tlsKeyFile else { return nil }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certFile)
        } catch {
            throw ConfigurationError("IAP_TLS_CERT_FILE", "\(certFile) holds no PEM certificate (\(error))")
        }
        guard !chain.isEmpty else { throw ConfigurationError("IAP_TLS_CERT_FILE", "\(certFile) holds no PEM certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            throw ConfigurationError("IAP_TLS_KEY_FILE", "\(keyFile) holds no PEM private key (\(error))")
        }
        return TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }
}
