import Foundation
import HTTPTypes
import Hummingbird
import IAPClient
import Logging
import IAPStages
import NIOConcurrencyHelpers
import PipelineCore

/// One of the drill's webhook destinations (the game backend, an analytics tool): a receiver over
/// real HTTP that checks every delivery's signature, answers 500 to a share of them at random (so
/// deliveries are retried), and keeps, per event id, how often it was accepted and in which order
/// each user's events first were. `filter`: what the destination is configured to get.
final class WebhookSink: Sendable {
    static let secret = "drill-webhook-secret-0123456789"
    let name: String
    let secret: String
    let filter: WebhookFilter
    let failureRate: Double
    private let verifier: WebhookVerifier
    private let state = NIOLockedValueBox(State())
    private let task = NIOLockedValueBox<Task<Void, any Error>?>(nil)

    struct State {
        var accepted: [String: Int] = [:]
        /// Per user, event ids in the order they were first accepted.
        var order: [String: [String]] = [:]
        var badSignatures = 0
        var refused = 0
    }

    init(name: String = RedisKeys.defaultWebhookDestination, secret: String = WebhookSink.secret, filter: WebhookFilter = .all,
         failureRate: Double) {
        self.name = name
        self.secret = secret
        self.filter = filter
        self.failureRate = failureRate
        verifier = WebhookVerifier(secret: secret)
    }

    /// The drill's destinations: the game backend (`IAP_WEBHOOK_URL`: every event) and an
    /// analytics tool (`IAP_WEBHOOKS_FILE`: the sales and refunds only), each refusing its own share.
    static func destinations(failureRate: Double) -> [WebhookSink] {
        [
            WebhookSink(failureRate: failureRate),
            WebhookSink(
                name: "analytics", secret: "drill-analytics-secret-0123456",
                filter: WebhookFilter(events: ["granted", "renewed", "released", "adopted", "revoked", "reinstated"]),
                failureRate: failureRate),
        ]
    }

    var snapshot: State { state.withLockedValue { $0 } }

    /// Starts listening on loopback; returns the URL to deliver to.
    func start() async throws -> String {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let router = Router()
        router.post("/hook") { request, _ in
            let body = Array(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            let id = request.headers[HTTPField.Name("X-IAP-Event-Id")!] ?? ""
            let signature = request.headers[HTTPField.Name("X-IAP-Signature")!] ?? ""
            let valid = self.verifier.isValid(header: signature, body: body)
            let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
            let user = object["user_id"] as? String ?? "_"
            let refuse = Double.random(in: 0..<1) < self.failureRate
            self.state.withLockedValue { state in
                if !valid { state.badSignatures += 1 }
                if refuse { state.refused += 1; return }
                if state.accepted[id, default: 0] == 0 { state.order[user, default: []].append(id) }
                state.accepted[id, default: 0] += 1
            }
            return Response(status: refuse ? .internalServerError : .noContent)
        }
        var logger = Logger(label: "drill-webhook")
        // Quiet: its stop (a cancellation) is not news.
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: logger)
        task.withLockedValue { $0 = Task { try await app.runService() } }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else { throw DrillError("the webhook receiver did not start") }
        return "http://127.0.0.1:\(port)/hook"
    }

    func stop() async {
        let running = task.withLockedValue { $0 }
        running?.cancel()
        _ = try? await running?.value
    }
}
