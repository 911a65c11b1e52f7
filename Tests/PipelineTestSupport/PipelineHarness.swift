import AppStoreServerAPI
import AppleJWS
@preconcurrency import Crypto
import AppleReceipt
import AppleSimulator
import AsyncHTTPClient
import Foundation
import IAPCLI
import IAPIntake
import IAPSettings
import PipelineCore
import IAPStages
import IAPOperations
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import RedisClient
import ServiceLifecycle
import TestSupport
import Testing

/// The whole pipeline in one process over real HTTP and a real Redis: apple-sim, the intake and
/// one worker per stage, each stage startable and stoppable on its own.
package final class PipelineHarness: Sendable {
    package let redisServer: RedisServer
    package let redis: RedisClient
    package let store: PipelineStore
    package let simulator: AppleSimulator
    package let simulatorServer: RunningServer
    package let intake: RunningServer
    /// The client keys the intake checks (`IAP_CLIENT_KEYS_FILE` in the environment), if any.
    package let clientKeys: ClientKeyring?
    /// The intake's waiting clients (`?wait=`).
    package let waiters: TicketWaiters
    package let configuration: PipelineConfiguration
    package let apple: AppleVerifier
    package let http: HTTPClient
    /// apple-sim's signing authority: the verifier trusts its root (as `IAP_APPLE_ROOT_CERTS` would).
    package var authority: SigningAuthority { simulator.authority }
    package let lookupClient: ServerAPIClient?
    /// With `IAP_APPS_FILE`: each app's client, as iap-verifier makes them.
    package let appClients: [(bundleID: String, client: ServerAPIClient)]
    /// With `IAP_WEBHOOK_URL` or `IAP_WEBHOOKS_FILE` in the environment: the webhook stage's
    /// clients, by destination.
    package let webhookClients: [String: WebhookClient]
    private let directory: URL
    private let workers = NIOLockedValueBox<[Stage: (StageWorkers, Task<Void, any Error>)]>([:])

    package static let bundleID = "com.example.game"
    package static let catalog = ProductCatalog(
        products: [
            "gold.100": .consumable, "level.pack": .nonConsumable, "vip.monthly": .autoRenewable, "gems.small": .consumable,
            "vip.yearly": .autoRenewable,
        ],
        dailyLimits: ["gems.small": 3],
        entitlements: ["level.pack": ["level_pack"], "vip.monthly": ["premium", "no_ads"], "vip.yearly": ["premium"]],
        subscriptionGroups: ["vip.monthly": "vip", "vip.yearly": "vip"],
        offers: ["vip.monthly": ["winback": .lapsed, "welcome": .new, "anyone": .any]])

    /// The same catalog as the JSON of `IAP_PRODUCTS_FILE`, for a test that gives it to the intake.
    package static let catalogJSON = #"""
        {"products": {"gold.100": {"type": "consumable"}, "gems.small": {"type": "consumable", "daily_limit_per_user": 3},
                      "level.pack": {"type": "non_consumable", "entitlements": ["level_pack"]},
                      "vip.monthly": {"type": "auto_renewable", "entitlements": ["premium", "no_ads"], "subscription_group": "vip",
                                      "offers": {"winback": {"eligibility": "lapsed"}, "welcome": {"eligibility": "new"},
                                                 "anyone": {"eligibility": "any"}}},
                      "vip.yearly": {"type": "auto_renewable", "entitlements": ["premium"], "subscription_group": "vip"}}}
        """#

    /// `serverAPI`: configure App Store Server API keys; `simulatorKnowsOurKey`: false makes
    /// apple-sim check tokens against another key (our configuration is then wrong).
    /// `environment`: more settings (they win over the harness's own).
    package init(
        maxAttempts: Int = 4, startWorkers: Bool = true, serverAPI: Bool = false, simulatorKnowsOurKey: Bool = true,
        environment extra: [String: String] = [:]
    ) async throws {
        redisServer = try await RedisServer.start()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let apiKey = P256.Signing.PrivateKey()
        let keyFile = directory.appendingPathComponent("AuthKey_TEST.p8").path
        try apiKey.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let simulatorKey = simulatorKnowsOurKey ? apiKey.publicKey : P256.Signing.PrivateKey().publicKey
        simulator = try AppleSimulator(settings: .init(port: 0, apiPublicKeyPEM: simulatorKey.pemRepresentation))
        let simulator = self.simulator
        simulatorServer = try await RunningServer.start { simulator.makeApplication(logger: testLogger, onServerRunning: $0) }
        let rootFile = directory.appendingPathComponent("apple-sim-root.pem").path
        try simulator.authority.rootPEM.write(toFile: rootFile, atomically: true, encoding: .utf8)
        var environment = [
            "IAP_REDIS_URL": redisServer.url,
            "IAP_APPLE_ROOT_CERTS": rootFile,
            "IAP_HTTP_PORT": "0",
            "IAP_APPLE_PRODUCTION_URL": simulatorServer.baseURL + AppleSimulator.productionPath,
            "IAP_APPLE_SANDBOX_URL": simulatorServer.baseURL + AppleSimulator.sandboxPath,
            "IAP_BUNDLE_IDS": Self.bundleID,
            "IAP_MAX_ATTEMPTS": String(maxAttempts),
            "IAP_RETRY_BASE_MS": "5",
            "IAP_RETRY_MAX_MS": "20",
            // One receipt's retries are these tests' subject, on an otherwise idle pipeline: without
            // the Apple breaker every failure spends an attempt (AppleBreakerTests turn it on).
            "IAP_APPLE_BREAKER_FAILURES": "0",
        ]
        if serverAPI {
            environment["IAP_APPLE_API_PRODUCTION_URL"] = simulatorServer.baseURL
            environment["IAP_APPLE_API_SANDBOX_URL"] = simulatorServer.baseURL + SimulatedServerAPI.sandboxPrefix
            environment["IAP_APPLE_API_KEY_ID"] = "TESTKEY123"
            environment["IAP_APPLE_API_ISSUER_ID"] = "57246542-96fe-1a63-e053-0824d011072a"
            environment["IAP_APPLE_API_PRIVATE_KEY_FILE"] = keyFile
        }
        environment.merge(extra) { _, new in new }
        var settings = try PipelineConfiguration(environment: environment)
        settings.redis.connection.connectTimeout = RedisServer.connectTimeout
        configuration = settings
        redis = configuration.redis.client(connections: 4)
        store = PipelineStore(
            redis: redis, keys: configuration.keys, replication: configuration.redis.replication, recheck: configuration.recheck)
        let store = self.store
        let configuration = self.configuration
        let notifications = try NotificationAdmission.make(configuration, store: store)
        let keyring = try configuration.intake.clientKeysFile.map { file throws(ConfigurationError) in try ClientKeyring(file: file) }
        clientKeys = keyring
        let tls = try IntakeApplication.tlsConfiguration(configuration)
        // As the executables do: every metric from here on lands in the process's registry.
        _ = bootstrapMetrics()
        let waiters = TicketWaiters(redis: configuration.redis.connection, keys: configuration.keys, logger: testLogger)
        self.waiters = waiters
        let lookupClient = try configuration.serverAPIs().first.map { _, api in
            ServerAPIClient(configuration: api, limiter: RedisAPIRateLimiter(store: store, maxPerSecond: configuration.serverAPI.maxRPS), maxConnections: 8)
        }
        self.lookupClient = lookupClient
        appClients = configuration.appsFile == nil
            ? lookupClient.map { [(configuration.bundleIDList.first ?? Self.bundleID, $0)] } ?? []
            : try configuration.serverAPIClients(store: store, maxConnections: 8, logger: testLogger)
        // The stages' catalog (`Self.catalog`) unless the test gives the intake its own.
        let catalog = configuration.hasCatalog ? try configuration.requireCatalog() : Self.catalog
        let roots = try configuration.rootCertificates()
        let support = appClients.isEmpty
            ? nil : SupportLookup(store: store, catalog: catalog, clients: appClients.map(\.client), signedData: SignedDataVerifier(rootCertificates: roots))
        intake = try await RunningServer.start {
            try IntakeApplication.make(
                store: store, configuration: configuration, notifications: notifications, clientKeys: keyring, tls: tls,
                waiters: waiters, metrics: .init(sampleEvery: .milliseconds(100), text: metricsText), support: support,
                logger: testLogger, onServerRunning: $0)
        }
        apple = AppleVerifier(configuration: configuration.apple)
        // A request waits for a pooled connection as long as it may take in all (AsyncHTTPClient's
        // default is 10 s: twenty requests at once on a loaded machine ran out of it).
        http = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: HTTPClient.Configuration(timeout: .init(connect: .init(Self.requestTimeout))))
        // Each client's pool as large as the worker (production's is the destination's share): a
        // test of the shares sees the handler's, not the pool's.
        webhookClients = Dictionary(uniqueKeysWithValues: ((try? configuration.webhook.required()) ?? []).map {
            ($0.name, WebhookClient(url: $0.url, timeout: configuration.webhook.timeout, maxConnections: Self.slots))
        })
        if startWorkers {
            for stage in Stage.allCases { start(stage) }
        }
    }

    /// `stage`'s handler, built where the stage executables build theirs (`StageAssembly`), with
    /// the harness's clients (apple-sim's), catalog and webhook clients.
    package func handler(for stage: Stage) -> any JobHandler {
        let catalog = configuration.hasCatalog ? nil : Self.catalog
        var configuration = self.configuration
        configuration.worker.concurrency = Self.slots
        let assembly = StageAssembly(
            configuration: configuration, store: store, logger: testLogger, apple: apple, clients: appClients, catalog: catalog,
            webhooks: webhookClients)
        return try! assembly.handler(for: stage)
    }

    /// Each worker's slots.
    static let slots = 8

    /// Starts a worker of `stage` (the webhook's only with a destination).
    package func start(_ stage: Stage) {
        if stage == .webhook && webhookClients.isEmpty { return }
        let worker = StageWorkers(
            handler: handler(for: stage), store: store,
            settings: WorkerSettings(concurrency: Self.slots, lease: .milliseconds(30000), block: .milliseconds(200), housekeeping: .milliseconds(20)),
            logger: testLogger)
        let running = Task { try await worker.run() }
        workers.withLockedValue { $0[stage] = (worker, running) }
    }

    package func stop(_ stage: Stage) async {
        guard let (worker, task) = workers.withLockedValue({ $0.removeValue(forKey: stage) }) else { return }
        worker.stop()
        _ = try? await task.value
    }

    package func shutdown() async {
        for stage in Stage.allCases { await stop(stage) }
        await intake.stop()
        await simulatorServer.stop()
        await apple.shutdown()
        await lookupClient?.shutdown()
        if configuration.appsFile != nil { for app in appClients { await app.client.shutdown() } }
        for client in webhookClients.values { await client.shutdown() }
        try? FileManager.default.removeItem(at: directory)
        try? await http.shutdown()
        await redis.close()
        redisServer.stop()
    }

    package struct Reply {
        package var status: Int
        package var headers: [String: String]
        package var json: [String: Any]
    }

    package func post(_ body: [String: Any], contentType: String = "application/json") async throws -> Reply {
        try await post(raw: try JSONSerialization.data(withJSONObject: body), contentType: contentType)
    }

    package func post(
        raw body: Data, contentType: String? = "application/json", path: String = "/v1/receipts", method: NIOHTTP1.HTTPMethod = .POST,
        headers: [(String, String)] = []
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: intake.baseURL + path)
        request.method = method
        if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
        request.headers.add(contentsOf: headers)
        request.body = .bytes(ByteBuffer(data: body))
        return try await send(request)
    }

    /// `timeout`: the client's, only a guard against a hang (on a machine loaded by the drill
    /// beside the suite, a cluster erasure took over 10 s); a long-poll (`?wait=`) needs one
    /// longer than its wait.
    package func get(_ path: String, headers: [(String, String)] = [], timeout: Duration = PipelineHarness.requestTimeout) async throws -> Reply {
        var request = HTTPClientRequest(url: intake.baseURL + path)
        request.headers.add(contentsOf: headers)
        return try await send(request, timeout: timeout)
    }

    package static let requestTimeout: Duration = .seconds(60)

    private func send(_ request: HTTPClientRequest, timeout: Duration = requestTimeout) async throws -> Reply {
        let response = try await http.execute(request, timeout: .init(timeout))
        let body = try await response.body.collect(upTo: 1 << 20)
        let json = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
        var headers: [String: String] = [:]
        for header in response.headers { headers[header.name.lowercased()] = header.value }
        return Reply(status: Int(response.status.code), headers: headers, json: json)
    }

    /// Submits a receipt and returns its ticket id (asserting it was accepted).
    package func submit(_ receipt: SimulatedReceipt, user: String = "player-1", productID: String? = nil, transactionID: String? = nil) async throws -> String {
        var body: [String: Any] = ["receipt_data": receipt.receiptData(), "user_id": user]
        if let productID { body["product_id"] = productID }
        if let transactionID { body["transaction_id"] = transactionID }
        let reply = try await post(body)
        #expect(reply.status == 202)
        return try #require(reply.json["ticket"] as? String)
    }

    /// Delivers a Server Notification as Apple does.
    package func notify(_ signedPayload: String) async throws -> Reply {
        try await post(raw: try JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload]), path: "/v1/notifications/apple")
    }

    /// Tells the intake which user an app account token belongs to.
    package func bind(token: String, to user: String) async throws -> Reply {
        try await post(
            raw: try JSONSerialization.data(withJSONObject: ["app_account_token": token]), path: "/v1/users/\(user)/app-account-token",
            method: .PUT)
    }

    /// Submits a StoreKit 2 signed transaction and returns its ticket id (asserting it was accepted).
    package func submit(signed jws: String, user: String = "player-1") async throws -> String {
        let reply = try await post(["signed_transaction": jws, "user_id": user])
        #expect(reply.status == 202)
        return try #require(reply.json["ticket"] as? String)
    }

    /// Waits for the ticket to be terminal (or, with `orHeld`, held), woken by `iap:results` (no polling).
    package func terminal(_ ticket: String, orHeld: Bool = false, timeout: Duration = .seconds(20)) async throws -> Ticket {
        let subscription = try await RedisSubscription(
            configuration: configuration.redis.connection, channels: [configuration.keys.results(ofTicket: ticket)], sharded: true)
        defer { Task { await subscription.close() } }
        while true {
            if let current = try await readTicket(ticket), current.status.isTerminal || (orHeld && current.status == .held) {
                return current
            }
            _ = try await subscription.next(timeout: timeout)
        }
    }

    /// Posts `body` as a client does while Redis is away: again after the client's own pause
    /// (100 ms) while the intake answers 503 or the connection fails, for at most `within`; the
    /// last reply otherwise.
    package func postUntilAccepted(_ body: [String: Any], within: Duration = .seconds(60)) async throws -> Reply {
        let deadline = ContinuousClock.now + within
        while ContinuousClock.now < deadline {
            if let reply = try? await post(body), reply.status != 503 { return reply }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await post(body)
    }

    /// Reads a ticket, riding out a pool connection that is still re-dialling after a Redis restart.
    package func readTicket(_ ticket: String) async throws -> Ticket? {
        for _ in 0..<50 {
            do {
                return try await store.ticket(ticket)
            } catch let error as RedisError where error.isTransient {
                try await Task.sleep(for: .milliseconds(50))  // the client's own retry pause
            }
        }
        return try await store.ticket(ticket)
    }

    /// Every bucket's fulfilment entries, merged by id.
    /// The ledger's entries on the fulfilment stream: every `event` but `notification` (each
    /// stored Apple notification's own entry, which `notifications: true` includes).
    package func fulfilments(notifications: Bool = false) async throws -> [[String: String]] {
        try await store.fulfilmentEntries().map(\.fields).filter { notifications || $0["event"] != "notification" }
    }

    /// Waits until the fulfilment stream's entries so far satisfy `done`, woken by the stream itself
    /// (XREAD BLOCK), and returns them.
    package func fulfilments(
        until done: @escaping ([[String: String]]) -> Bool, notifications: Bool = false, timeout: Duration = .seconds(30)
    ) async throws -> [[String: String]] {
        var seen: [[String: String]] = []
        // Every bucket's stream (one server holds them all in these tests), each from where it was read to.
        let streams = configuration.keys.everyBucket.map(\.fulfilment)
        var last = Dictionary(uniqueKeysWithValues: streams.map { ($0, "0-0") })
        let deadline = ContinuousClock.now + timeout
        let connection = RedisConnection(configuration: configuration.redis.connection)
        defer { Task { await connection.close() } }
        while ContinuousClock.now < deadline {
            let reply = try await connection.execute(
                RedisCommand(["XREAD", "BLOCK", "1000", "STREAMS"] + streams + streams.map { last[$0]! }), blocking: .milliseconds(1000))
            for stream in reply.array ?? [] {
                guard let name = stream.array?.first?.string else { continue }
                for entry in stream.array?.last?.array ?? [] {
                    guard let parts = entry.array, parts.count == 2, let id = parts[0].string else { continue }
                    last[name] = id
                    let fields = parts[1].stringDictionary
                    if notifications || fields["event"] != "notification" { seen.append(fields) }
                }
            }
            if done(seen) { return seen }
        }
        throw TestSupportError("no fulfilment entry matched within \(timeout); saw \(seen.map { $0["event"] ?? "?" })")
    }

    /// Every key in Redis but the intake's own announcement (`intakes`): what requests stored.
    /// Every key but the intakes' own bookkeeping (their announcement and the queues' samples),
    /// which a running intake writes whatever it is asked.
    package func storedKeys() async throws -> [String] {
        let bookkeeping: Set = [configuration.keys.intakes, configuration.keys.queueHistory]
        return (try await redis.send("KEYS", "*").array ?? []).compactMap(\.string).filter { !bookkeeping.contains($0) }.sorted()
    }

    package func length(_ key: String) async throws -> Int {
        Int(try await redis.send("LLEN", key).int ?? -1)
    }
}

/// Runs `body` with a fresh pipeline and always tears it down.
package func withPipeline(
    maxAttempts: Int = 4, startWorkers: Bool = true, serverAPI: Bool = false, simulatorKnowsOurKey: Bool = true,
    environment: [String: String] = [:], _ body: (PipelineHarness) async throws -> Void
) async throws {
    let harness = try await PipelineHarness(
        maxAttempts: maxAttempts, startWorkers: startWorkers, serverAPI: serverAPI, simulatorKnowsOurKey: simulatorKnowsOurKey,
        environment: environment)
    do {
        try await body(harness)
    } catch {
        await harness.shutdown()
        throw error
    }
    await harness.shutdown()
}

package func receipt(
    _ transactions: [SimulatedReceipt.Transaction], environment: String = "Production", bundleID: String = PipelineHarness.bundleID,
    status: Int? = nil, failures: Int? = nil
) -> SimulatedReceipt {
    SimulatedReceipt(bundleID: bundleID, environment: environment, transactions: transactions, status: status, transientFailures: failures)
}

package func gold(_ id: String) -> SimulatedReceipt.Transaction {
    .init(transactionID: id, productID: "gold.100")
}
