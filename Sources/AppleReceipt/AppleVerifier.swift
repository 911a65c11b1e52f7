import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat

/// Calls verifyReceipt: production first, sandbox on 21007, production again on 21008.
/// TLS certificates are always verified (AsyncHTTPClient's default, never switched off here).
public final class AppleVerifier: Sendable {
    public let configuration: AppleVerifierConfiguration
    private let http: HTTPClient
    /// Apple's answers are small; anything larger than this is not an answer.
    private static let maxResponseBytes = 8 << 20

    public init(configuration: AppleVerifierConfiguration) {
        self.configuration = configuration
        var http = HTTPClient.Configuration()
        http.timeout = .init(connect: .init(min(configuration.timeout, .seconds(10))))
        http.connectionPool = .init(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: max(configuration.maxConnections, 1)
        )
        http.redirectConfiguration = .disallow
        // No span a request: the pipeline bootstraps no tracer, and the default one (a no-op) still
        // built each request's span and attributes, about 7 % of a verifier's CPU.
        http.tracing.tracer = nil
        self.http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: http)
    }

    public func shutdown() async {
        try? await http.shutdown()
    }

    /// One verification attempt (a 21007/21008 re-route is part of it, not a new attempt).
    /// `attempt` counts from 1 and decides when a 21002 stops being retried.
    public func verify(receiptData: String, attempt: Int) async -> VerificationOutcome {
        await verify(receiptData: receiptData, attempt: attempt, sharedSecret: configuration.sharedSecret)
    }

    /// The same with another app's shared secret (`IAP_APPS_FILE`); `nil`: none sent.
    public func verify(receiptData: String, attempt: Int, sharedSecret: String?) async -> VerificationOutcome {
        var url = configuration.productionURL
        var environment = "Production"
        for _ in 0..<3 {
            let answer: VerifyReceiptResponse
            switch await post(receiptData: receiptData, sharedSecret: sharedSecret, to: url) {
            case .ended(let outcome): return outcome
            case .answer(let response): answer = response
            }
            switch AppleStatus.classify(answer.status, isRetryable: answer.isRetryable, attempt: attempt) {
            case .valid:
                var receipt = VerifiedReceipt(
                    environment: answer.environment ?? environment,
                    bundleID: answer.receipt?.bundleID ?? "",
                    transactions: answer.transactions
                )
                receipt.pendingRenewals = answer.pendingRenewalInfo
                return .valid(receipt)
            case .sandboxReceipt where url != configuration.sandboxURL:
                url = configuration.sandboxURL
                environment = "Sandbox"
            case .productionReceipt where url != configuration.productionURL:
                url = configuration.productionURL
                environment = "Production"
            case .sandboxReceipt, .productionReceipt:
                return .transient(reason: AppleStatus.reason(answer.status), detail: "environment ping-pong", retryAfterMs: nil)
            case .rejected:
                return .rejected(reason: AppleStatus.reason(answer.status))
            case .misconfigured:
                let detail = answer.status == 21004
                    ? "Apple says the shared secret is wrong (21004): check IAP_APPLE_SHARED_SECRET (or the app's in IAP_APPS_FILE)"
                    : "Apple could not read our request (\(answer.status))"
                return .misconfigured(reason: AppleStatus.reason(answer.status), detail: detail)
            case .transient:
                return .transient(
                    reason: AppleStatus.reason(answer.status), detail: "Apple answered status \(answer.status)",
                    retryAfterMs: nil)
            }
        }
        return .transient(reason: "apple_reroute_loop", detail: "too many environment re-routes", retryAfterMs: nil)
    }

    private func post(receiptData: String, sharedSecret: String?, to url: String) async -> Hop {
        let body = VerifyReceiptRequest(
            receiptData: receiptData, password: sharedSecret,
            excludeOldTransactions: configuration.excludeOldTransactions ? true : nil)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body.body))
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        let started = ContinuousClock.now
        let environment = url == configuration.sandboxURL ? "sandbox" : "production"
        do {
            response = try await http.execute(request, timeout: .init(configuration.timeout))
            bytes = try await response.body.collect(upTo: Self.maxResponseBytes)
        } catch {
            AppleCallMetrics.record(endpoint: "verify_receipt", environment: environment, status: "unreachable", since: started)
            return .ended(.transient(reason: "apple_unreachable", detail: Self.describe(error), retryAfterMs: nil))
        }
        let code = Int(response.status.code)
        AppleCallMetrics.record(endpoint: "verify_receipt", environment: environment, status: String(code), since: started)
        if code == 429 || code >= 500 {
            let retryAfter = response.headers.first(name: "Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            return .ended(.transient(
                reason: AppleReason.appleHTTP(code), detail: "Apple answered HTTP \(code)", retryAfterMs: retryAfter.map { $0 * 1000 }))
        }
        guard code == 200 else {
            // A 4xx from a verifyReceipt URL means the URL or request is wrong on our side.
            return .ended(.misconfigured(reason: AppleReason.appleHTTP(code), detail: "Apple answered HTTP \(code) from \(url)"))
        }
        do {
            return .answer(try bytes.withUnsafeReadableBytes { try VerifyReceiptResponse(parsing: $0) })
        } catch {
            return .ended(.transient(reason: "apple_bad_response", detail: "not a verifyReceipt answer: \(error)", retryAfterMs: nil))
        }
    }

    /// One HTTP exchange: Apple's answer, or how the attempt already ended.
    private enum Hop {
        case answer(VerifyReceiptResponse)
        case ended(VerificationOutcome)
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError { return "\(error)" }
        return String(describing: error)
    }
}
