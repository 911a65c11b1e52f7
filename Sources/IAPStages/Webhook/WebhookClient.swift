import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// How one POST to the webhook ended.
package enum WebhookPostResult: Sendable, Equatable {
    case delivered
    /// Anything but a 2xx, or no answer: retried. `detail` never holds the body.
    case failed(String)
}

/// The seam to the game backend's webhook.
package protocol WebhookPosting: Sendable {
    func post(_ body: [UInt8], headers: [(String, String)]) async -> WebhookPostResult
}

/// POSTs to one destination's URL with AsyncHTTPClient: TLS verified (never switched off), no
/// redirects followed, each call bounded by `timeout`.
///
/// A connection that cannot be made fails the post at once, and the delivery's own retry policy
/// (backoff with jitter, per user) decides when to try again. AsyncHTTPClient's default instead
/// keeps the post waiting while its pool retries the connection with a backoff of its own,
/// 100 ms x 1.25^n up to 60 s, that only a successful connection resets: after a long outage of
/// the receiver, the first post after it came back waited for that timer (21 s seen once).
package final class WebhookClient: WebhookPosting {
    package let url: String
    private let timeout: Duration
    private let http: HTTPClient

    package init(url: String, timeout: Duration, maxConnections: Int) {
        self.url = url
        self.timeout = timeout
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(5))
        configuration.redirectConfiguration = .disallow
        // No span a request: the pipeline bootstraps no tracer, and the default one (a no-op) still
        // built each request's span and attributes, about 7 % of a verifier's CPU.
        configuration.tracing.tracer = nil
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(maxConnections, 1))
        configuration.connectionPool.retryConnectionEstablishment = false
        http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// A client for each destination, by name; each pool as large as the destination's share.
    package static func forEach(
        _ destinations: [WebhookDestination], timeout: Duration, slots: Int
    ) -> [String: WebhookClient] {
        let shares = WebhookDestination.shares(of: destinations, slots: slots)
        return Dictionary(uniqueKeysWithValues: destinations.map {
            ($0.name, WebhookClient(url: $0.url, timeout: timeout, maxConnections: shares[$0.name] ?? slots))
        })
    }

    package func shutdown() async {
        try? await http.shutdown()
    }

    package func post(_ body: [UInt8], headers: [(String, String)]) async -> WebhookPostResult {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "iap-webhook")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await http.execute(request, timeout: .nanoseconds(timeout.components.seconds * 1_000_000_000
                + timeout.components.attoseconds / 1_000_000_000))
            _ = try? await response.body.collect(upTo: 64 << 10)
            let status = Int(response.status.code)
            return (200...299).contains(status) ? .delivered : .failed("HTTP \(status)")
        } catch {
            return .failed("unreachable: \(error)")
        }
    }
}
