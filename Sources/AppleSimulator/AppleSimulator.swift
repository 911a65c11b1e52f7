import AppleJWS
@preconcurrency import Crypto
import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers

/// Plays Apple for local runs, tests and benchmarks: verifyReceipt (production at
/// `/verifyReceipt`, sandbox at `/sandbox/verifyReceipt`, answers decided by the receipt's content),
/// and the App Store Server API (`/inApps/...`, sandbox under `/sandbox`), signing with its own
/// certificate authority, whose root the pipeline is told to trust through `IAP_APPLE_ROOT_CERTS`.
public final class AppleSimulator: Sendable {
    public static let productionPath = "/verifyReceipt"
    public static let sandboxPath = "/sandbox/verifyReceipt"

    public let settings: AppleSimulatorSettings
    /// Failures served so far per receipt, for `transient_failures`.
    private let failuresServed = NIOLockedValueBox<[String: Int]>([:])
    private let requests = NIOLockedValueBox(0)
    private let outage = OutageState()
    /// Apps with their own shared secret (by bundle id): their receipts are refused (21004) with another.
    private let appSecrets = NIOLockedValueBox<[String: String]>([:])
    /// The stand-in for Apple's certificate hierarchy that signs everything this simulator signs.
    public let authority: SigningAuthority
    public let serverAPI: SimulatedServerAPI
    /// StoreKit's check of offer signatures (`/control/offer-keys`, `/control/offers/check`).
    public let offers = SimulatedOfferCheck()

    public init(settings: AppleSimulatorSettings) throws {
        self.settings = settings
        authority = try SigningAuthority()
        let publicKey = try settings.apiPublicKeyPEM.map { try P256.Signing.PublicKey(pemRepresentation: $0) }
        serverAPI = SimulatedServerAPI(authority: authority, publicKey: publicKey)
    }

    /// How many verification requests it has answered.
    public var requestCount: Int { requests.withLockedValue { $0 } }

    public func makeApplication(logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol
    {
        let router = Router()
        router.post(RouterPath(stringLiteral: Self.productionPath)) { request, _ in
            try await self.answer(request, sandbox: false)
        }
        router.post(RouterPath(stringLiteral: Self.sandboxPath)) { request, _ in
            try await self.answer(request, sandbox: true)
        }
        router.get("/healthz") { _, _ in "ok" }
        router.post(RouterPath(stringLiteral: Self.floorPath)) { request, _ in try await Self.floorAnswer(request) }
        serverAPI.register(on: router)
        offers.register(on: router)
        router.post("/control/apps") { request, context in
            let order = try await request.decode(as: AppOrder.self, context: context)
            let key: P256.Signing.PublicKey?
            do {
                key = try order.apiPublicKeyPEM.map { try P256.Signing.PublicKey(pemRepresentation: $0) }
            } catch {
                throw HTTPError(.badRequest, message: "api_public_key_pem is not a P-256 public key in PEM")
            }
            self.setApp(order.bundleID, sharedSecret: order.sharedSecret, apiPublicKey: key)
            return HTTPResponse.Status.noContent
        }
        router.post("/control/outage") { request, context in
            let outage = try await request.decode(as: SimulatedOutage.self, context: context)
            guard (0...600_000).contains(outage.durationMs) else {
                throw HTTPError(.badRequest, message: "duration_ms must be within 0...600000")
            }
            self.startOutage(outage)
            return HTTPResponse.Status.noContent
        }
        return Application(
            router: router,
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "apple-sim"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// The bench's floor under the intake: a bare Hummingbird route taking what a client submits
    /// (`/floor/v1/receipts`) and answering the intake's 202 with a ticket, doing nothing else (no
    /// parse, no check, no Redis). What the intake costs beyond it is the intake's own work.
    public static let floorPath = "/floor/v1/receipts"

    static func floorAnswer(_ request: Request) async throws -> Response {
        _ = try await request.body.collect(upTo: 1 << 20)
        return Response(
            status: .accepted, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(staticString: #"{"status":"queued","ticket":"floor"}"#)))
    }

    /// Plays one app of several: its receipts need `sharedSecret` (`nil`: the simulator's own, if
    /// any), its Server API tokens the key whose public part is `apiPublicKey` (`nil`: the simulator's).
    public func setApp(_ bundleID: String, sharedSecret: String?, apiPublicKey: P256.Signing.PublicKey? = nil) {
        appSecrets.withLockedValue { $0[bundleID] = sharedSecret }
        if let apiPublicKey { serverAPI.setAppKey(apiPublicKey, bundleID: bundleID) }
    }

    /// Starts (or with `.off` ends) an outage.
    public func startOutage(_ outage: SimulatedOutage) {
        self.outage.start(outage)
    }

    func answer(_ request: Request, sandbox: Bool) async throws -> Response {
        requests.withLockedValue { $0 += 1 }
        if settings.latencyMs > 0 { try await Task.sleep(for: .milliseconds(settings.latencyMs)) }
        if let active = outage.active() {
            if active.mode == .timeout { try await Task.sleep(until: active.until, clock: .continuous) }
            return Response(status: .serviceUnavailable)
        }
        if settings.errorRate > 0, Double.random(in: 0..<1) < settings.errorRate {
            return Response(status: .serviceUnavailable)
        }
        let body = try await request.body.collect(upTo: 16 << 20)
        let answer = respond(to: Data(buffer: body), sandbox: sandbox)
        var headers: HTTPFields = [.contentType: "application/json"]
        if let seconds = answer.retryAfterSeconds { headers[.retryAfter] = String(seconds) }
        return Response(status: answer.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
    }

    /// The whole decision, apart from HTTP: what Apple would answer to this request body.
    public struct Answer: Sendable {
        public var status: HTTPResponse.Status = .ok
        public var body: Data
        public var retryAfterSeconds: Int?
    }

    public func respond(to body: Data, sandbox: Bool) -> Answer {
        guard let request = try? JSONDecoder().decode(SimulatedRequest.self, from: body) else {
            return Answer(body: Self.status(21000))
        }
        let receiptData = request.receiptData
        let bytes = Data(base64Encoded: receiptData)
        let receipt = bytes.flatMap { try? JSONDecoder().decode(SimulatedReceipt.self, from: $0) }
        // The receipt's own app's secret when it has one, else the simulator's.
        if let secret = receipt.flatMap({ receipt in appSecrets.withLockedValue { $0[receipt.bundleID] } }) ?? settings.sharedSecret,
           request.password != secret
        {
            return Answer(body: Self.status(21004))
        }
        guard let receipt else { return Answer(body: Self.status(21002)) }
        let isSandboxReceipt = receipt.environment.lowercased() == "sandbox"
        if isSandboxReceipt && !sandbox { return Answer(body: Self.status(21007)) }
        if !isSandboxReceipt && sandbox { return Answer(body: Self.status(21008)) }
        if let failures = receipt.transientFailures, failures != 0 {
            let fail = failuresServed.withLockedValue { served in
                let count = served[receiptData, default: 0]
                guard failures < 0 || count < failures else { return false }
                served[receiptData] = count + 1
                return true
            }
            if fail {
                if let code = receipt.failureHTTPStatus {
                    return Answer(status: HTTPResponse.Status(code: code), body: Data(), retryAfterSeconds: receipt.retryAfterSeconds)
                }
                return Answer(body: Self.status(21005))
            }
        }
        if let forced = receipt.status, forced != 0 {
            var answer: [String: Any] = ["status": forced]
            if let retryable = receipt.retryable { answer["is-retryable"] = retryable }
            return Answer(body: Self.json(answer))
        }
        return Answer(body: Self.validAnswer(receipt, sandbox: sandbox, subscription: receipt.subscription.flatMap(serverAPI.receiptView(of:))))
    }

    /// Apple's answer for a good receipt. Codable rather than JSONSerialization: the simulator
    /// shares the bench's machine, so what it spends is taken from the pipeline.
    static func validAnswer(
        _ receipt: SimulatedReceipt, sandbox: Bool,
        subscription: (periods: [JWSTransaction], renewal: JWSRenewalInfo, status: Int)? = nil
    ) -> Data {
        let now = String(Int64(Date().timeIntervalSince1970 * 1000))
        func expires(of transactionID: String) -> String? {
            guard let period = subscription?.periods.first(where: { $0.transactionID == transactionID }) else { return nil }
            return period.expiresDate.map { String($0) }
        }
        var answer = SimulatedAnswer(
            environment: sandbox ? "Sandbox" : "Production",
            receipt: .init(
                receiptType: sandbox ? "ProductionSandbox" : "Production", bundleID: receipt.bundleID, requestDateMs: now,
                inApp: receipt.transactions.map { transaction in
                    .init(
                        transactionID: transaction.transactionID,
                        originalTransactionID: transaction.originalTransactionID ?? transaction.transactionID,
                        productID: transaction.productID, quantity: String(transaction.quantity ?? 1), purchaseDateMs: now,
                        originalPurchaseDateMs: now, webOrderLineItemID: transaction.webOrderLineItemID,
                        cancellationDateMs: transaction.cancellationDateMs,
                        expiresDateMs: expires(of: transaction.transactionID))
                }))
        if let subscription {
            answer.latestReceiptInfo = subscription.periods.map(SimulatedAnswer.InApp.init(period:))
            answer.pendingRenewalInfo = [.init(
                originalTransactionID: subscription.renewal.originalTransactionID,
                autoRenewStatus: String(subscription.renewal.autoRenewStatus ?? 0),
                isInBillingRetryPeriod: subscription.renewal.isInBillingRetryPeriod == true ? "1" : "0",
                gracePeriodExpiresDateMs: subscription.renewal.gracePeriodExpiresDate.map { String($0) })]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(answer)) ?? Data()
    }

    static func status(_ code: Int) -> Data { json(["status": code]) }

    static func json(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }
}

/// `POST /control/apps`: one app of several, with its own shared secret and Server API key.
struct AppOrder: Decodable {
    var bundleID: String
    var sharedSecret: String?
    var apiPublicKeyPEM: String?

    enum CodingKeys: String, CodingKey {
        case bundleID = "bundle_id"
        case sharedSecret = "shared_secret"
        case apiPublicKeyPEM = "api_public_key_pem"
    }
}
