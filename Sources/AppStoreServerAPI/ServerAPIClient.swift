import AppleReceipt
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The App Store Server API calls the pipeline makes: Get Transaction Info, Get Transaction
/// History v2, Get All Subscription Statuses, Send Consumption Information, Set App Account Token, Get App
/// Transaction Info, Finish Transaction,
/// the test notification's, Get Notification History and Look Up Order ID. Every call takes a permit from the fleet-wide
/// rate limiter first; a 429 holds the endpoint for the whole fleet until Apple's Retry-After.
public final class ServerAPIClient: Sendable {
    public let configuration: ServerAPIConfiguration
    private let token: ServerAPIToken
    private let limiter: (any ServerAPIRateLimiting)?
    private let http: HTTPClient
    private let logger: Logger

    /// Apple's error codes that mean "try again".
    static let retryableErrorCodes: Set<Int> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]
    static let transactionNotFound = 4_040_010
    /// The transient reason of a call refused for the rate (Apple's 429, or the fleet's budget spent).
    public static let rateLimitedReason = "apple_api_rate_limited"
    static let maxResponseBytes = 4 << 20
    /// A wait for the rate limiter up to this long happens in place; a longer one becomes a retry.
    static let longestInPlaceWait: Duration = .seconds(1)

    public init(
        configuration: ServerAPIConfiguration, limiter: (any ServerAPIRateLimiting)?, maxConnections: Int,
        logger: Logger = Logger(label: "app-store-server-api")
    ) {
        self.configuration = configuration
        self.token = ServerAPIToken(
            keyID: configuration.keyID, issuerID: configuration.issuerID, privateKey: configuration.privateKey,
            bundleID: configuration.bundleID)
        self.limiter = limiter
        self.logger = logger
        var http = HTTPClient.Configuration()
        http.timeout = .init(connect: .seconds(10))
        http.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(maxConnections, 1))
        http.redirectConfiguration = .disallow
        // No span a request: the pipeline bootstraps no tracer, and the default one (a no-op) still
        // built each request's span and attributes, about 7 % of a verifier's CPU.
        http.tracing.tracer = nil
        self.http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: http)
    }

    public func shutdown() async {
        try? await http.shutdown()
    }

    /// `GET /inApps/v1/transactions/{transactionId}`: `{"signedTransactionInfo": JWS}`.
    public func transactionInfo(_ transactionID: String, environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await call(.transactionInfo, path: "/inApps/v1/transactions/\(Self.escape(transactionID))", environment: environment)
    }

    /// `GET /inApps/v2/history/{transactionId}?revision=…`: one page of the customer's history.
    public func transactionHistory(
        _ transactionID: String, revision: String?, environment: ServerAPIEnvironment
    ) async -> ServerAPIAnswer {
        var path = "/inApps/v2/history/\(Self.escape(transactionID))"
        if let revision { path += "?revision=\(Self.escape(revision))" }
        return await call(.transactionHistory, path: path, environment: environment)
    }

    /// `GET /inApps/v1/subscriptions/{transactionId}`: every subscription status of the customer.
    public func subscriptionStatuses(_ transactionID: String, environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await call(.subscriptionStatuses, path: "/inApps/v1/subscriptions/\(Self.escape(transactionID))", environment: environment)
    }

    /// `PUT /inApps/v2/transactions/consumption/{transactionId}`: Apple answers 202 with no body.
    public func sendConsumptionInformation(
        _ information: ConsumptionInformation, transactionID: String, environment: ServerAPIEnvironment
    ) async -> ServerAPIAnswer {
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(information))
        } catch {
            return .misconfigured(detail: "cannot encode the consumption information: \(error)")
        }
        return await call(
            .consumption, method: .PUT, path: "/inApps/v2/transactions/consumption/\(Self.escape(transactionID))", body: body,
            environment: environment)
    }

    /// `GET /inApps/v1/transactions/appTransactions/{transactionId}`: the customer's app transaction
    /// (`{"signedAppTransactionInfo": JWS}`) for any transaction id of theirs.
    public func appTransactionInfo(_ transactionID: String, environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await call(
            .appTransactionInfo, path: "/inApps/v1/transactions/appTransactions/\(Self.escape(transactionID))", environment: environment)
    }

    /// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken` with
    /// `{"appAccountToken": UUID}`: Apple answers 200 with no body. Refused: 4000183 (not a UUID),
    /// 4000185 (a family-shared transaction), 4000187 (not an original transaction id).
    public func setAppAccountToken(
        _ token: String, originalTransactionID: String, environment: ServerAPIEnvironment
    ) async -> ServerAPIAnswer {
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(["appAccountToken": token]))
        } catch {
            return .misconfigured(detail: "cannot encode the app account token: \(error)")
        }
        return await call(
            .appAccountToken, method: .PUT, path: "/inApps/v1/transactions/\(Self.escape(originalTransactionID))/appAccountToken",
            body: body, environment: environment)
    }

    /// `POST /inApps/v1/transactions/{transactionId}/finish` (API 1.20): the server has delivered the
    /// purchase; Apple answers 200 with no body.
    public func finishTransaction(_ transactionID: String, environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await call(
            .finishTransaction, method: .POST, path: "/inApps/v1/transactions/\(Self.escape(transactionID))/finish", environment: environment)
    }

    /// `POST /inApps/v1/notifications/test`: Apple sends a `TEST` notification to the app's URL;
    /// answers `{"testNotificationToken"}`.
    public func requestTestNotification(environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await call(.testNotification, method: .POST, path: "/inApps/v1/notifications/test", environment: environment)
    }

    /// `GET /inApps/v1/notifications/test/{testNotificationToken}`: the test notification
    /// (`signedPayload`) and Apple's attempts to send it (`sendAttempts`: `attemptDate`, `sendAttemptResult`).
    public func testNotificationStatus(_ token: String, environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await call(.testNotificationStatus, path: "/inApps/v1/notifications/test/\(Self.escape(token))", environment: environment)
    }

    /// `POST /inApps/v1/notifications/history?paginationToken=…`: one page (up to 20) of the
    /// notifications Apple sent or tried to send (`notificationHistory`: `signedPayload`,
    /// `sendAttempts`), `hasMore` and the `paginationToken` of the next page. Every page of one
    /// walk sends the same `query`.
    public func notificationHistory(
        _ query: NotificationHistoryQuery, paginationToken: String?, environment: ServerAPIEnvironment
    ) async -> ServerAPIAnswer {
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(query))
        } catch {
            return .misconfigured(detail: "cannot encode the notification history request: \(error)")
        }
        var path = "/inApps/v1/notifications/history"
        if let paginationToken { path += "?paginationToken=\(Self.escape(paginationToken))" }
        return await call(.notificationHistory, method: .POST, path: path, body: body, environment: environment)
    }

    /// `GET /inApps/v1/lookup/{orderId}` (production only: sandbox purchases have no order id):
    /// `{"status": 0 | 1, "signedTransactions": [JWS]}`; status 1 means the order id is not valid.
    public func lookUpOrder(_ orderID: String) async -> ServerAPIAnswer {
        await call(.orderLookup, path: "/inApps/v1/lookup/\(Self.escape(orderID))", environment: .production)
    }

    /// `GET /inApps/v2/refund/lookup/{transactionId}?revision=…`: one page of the customer's
    /// refunded purchases (`signedTransactions`, `revision` of the next page, `hasMore`).
    public func refundHistory(_ transactionID: String, revision: String?, environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        var path = "/inApps/v2/refund/lookup/\(Self.escape(transactionID))"
        if let revision { path += "?revision=\(Self.escape(revision))" }
        return await call(.refundHistory, path: path, environment: environment)
    }

    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}` with `{extendByDays,
    /// extendReasonCode, requestIdentifier}`: `{effectiveDate, originalTransactionId,
    /// webOrderLineItemId, success}`.
    public func extendRenewalDate(
        originalTransactionID: String, _ request: RenewalExtension, environment: ServerAPIEnvironment
    ) async -> ServerAPIAnswer {
        guard let body = try? JSONEncoder().encode(request) else { return .misconfigured(detail: "cannot encode the extension") }
        return await call(
            .extendRenewalDate, method: .PUT, path: "/inApps/v1/subscriptions/extend/\(Self.escape(originalTransactionID))",
            body: Array(body), environment: environment)
    }

    /// `POST /inApps/v1/subscriptions/extend/mass` with `{extendByDays, extendReasonCode,
    /// requestIdentifier, productId, storefrontCountryCodes?}`: `{requestIdentifier}`; Apple works
    /// through the subscribers and tells each `RENEWAL_EXTENDED`, then `RENEWAL_EXTENSION` `SUMMARY`.
    public func extendRenewalDates(_ request: RenewalExtension, environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        guard let body = try? JSONEncoder().encode(request) else { return .misconfigured(detail: "cannot encode the extension") }
        return await call(
            .massExtendRenewalDate, method: .POST, path: "/inApps/v1/subscriptions/extend/mass", body: Array(body), environment: environment)
    }

    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`: `{requestIdentifier,
    /// complete, completeDate, succeededCount, failedCount}`.
    public func renewalExtensionStatus(
        productID: String, requestIdentifier: String, environment: ServerAPIEnvironment
    ) async -> ServerAPIAnswer {
        await call(
            .massExtendStatus,
            path: "/inApps/v1/subscriptions/extend/mass/\(Self.escape(productID))/\(Self.escape(requestIdentifier))",
            environment: environment)
    }

    func call(
        _ endpoint: ServerAPIEndpoint, method: HTTPMethod = .GET, path: String, body requestBody: [UInt8]? = nil,
        contentType: String = "application/json", environment: ServerAPIEnvironment
    ) async -> ServerAPIAnswer {
        if let wait = await waitForPermit(endpoint, environment) { return wait }
        let bearer: String
        do {
            bearer = try token.token()
        } catch {
            return .misconfigured(detail: "cannot sign the API token: \(error)")
        }
        var request = HTTPClientRequest(url: configuration.baseURL(environment) + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(bearer)")
        request.headers.add(name: "Accept", value: "application/json")
        if let requestBody {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: requestBody))
        }
        let response: HTTPClientResponse
        let body: ByteBuffer
        let started = ContinuousClock.now
        do {
            response = try await http.execute(request, timeout: .nanoseconds(configuration.timeout.nanoseconds))
            body = try await response.body.collect(upTo: Self.maxResponseBytes)
        } catch {
            AppleCallMetrics.record(endpoint: endpoint.rawValue, environment: environment.rawValue, status: "unreachable", since: started)
            return .transient(reason: "apple_api_unreachable", detail: "\(error)", retryAfterMs: nil)
        }
        let status = Int(response.status.code)
        AppleCallMetrics.record(endpoint: endpoint.rawValue, environment: environment.rawValue, status: String(status), since: started)
        let bytes = Array(body.readableBytesView)
        if (200...299).contains(status) { return .ok(bytes) }
        let error = try? JSONDecoder().decode(ErrorBody.self, from: Data(bytes))
        let code = error?.errorCode
        let detail = "HTTP \(status)" + (code.map { " errorCode \($0)" } ?? "") + (error?.errorMessage.map { ": \($0.prefix(200))" } ?? "")
        switch status {
        case 429:
            let until = Self.retryAfter(response.headers.first(name: "Retry-After"), now: Date())
            let waitMs = Int(max(until - Int64(Date().timeIntervalSince1970 * 1000), 0))
            logger.warning("App Store Server API rate limit: the fleet holds the endpoint", metadata: [
                "endpoint": "\(endpoint.rawValue)", "environment": "\(environment.rawValue)", "wait_ms": "\(waitMs)",
            ])
            if let limiter {
                try? await limiter.hold(endpoint: endpoint, environment: environment, untilMs: until)
            }
            return .transient(reason: Self.rateLimitedReason, detail: detail, retryAfterMs: waitMs)
        case 401:
            return .unauthorized(status: status, detail: detail)
        case 403 where code == nil:
            // Our token refused. A 403 with an errorCode is Apple refusing the request itself
            // (4030004 not eligible for an extension, 4030005 extended twice already, …).
            return .unauthorized(status: status, detail: detail)
        case 404 where code == Self.transactionNotFound:
            return .notFound
        case _ where code.map(Self.retryableErrorCodes.contains) == true, 500...599:
            return .transient(reason: "apple_api_\(code.map(String.init) ?? "http_\(status)")", detail: detail, retryAfterMs: nil)
        case 400...499 where code != nil:
            return .refused(errorCode: code!, detail: detail)
        default:
            return .misconfigured(detail: "\(detail) from \(configuration.baseURL(environment))\(path)")
        }
    }

    /// Waits for a permit when the wait is short; otherwise ends the attempt as a retry after the wait.
    private func waitForPermit(_ endpoint: ServerAPIEndpoint, _ environment: ServerAPIEnvironment) async -> ServerAPIAnswer? {
        guard let limiter else { return nil }
        while true {
            let wait: Duration?
            do {
                wait = try await limiter.permit(endpoint: endpoint, environment: environment)
            } catch {
                return .transient(reason: "rate_limiter_unavailable", detail: "\(error)", retryAfterMs: nil)
            }
            guard let wait else { return nil }
            AppleCallMetrics.rateLimitWait(
                endpoint: endpoint.rawValue, environment: environment.rawValue, wait: wait, deferred: wait > Self.longestInPlaceWait)
            if wait > Self.longestInPlaceWait {
                return .transient(
                    reason: Self.rateLimitedReason, detail: "the fleet's budget for \(endpoint.rawValue) is spent",
                    retryAfterMs: Int(wait / .milliseconds(1)))
            }
            do {
                try await Task.sleep(for: wait)
            } catch {
                return .transient(reason: "cancelled", detail: "stopping", retryAfterMs: nil)
            }
        }
    }

    /// Apple's Retry-After is the UNIX time in milliseconds when calls may resume; seconds from
    /// now are accepted too. Absent or unreadable: one second from now.
    public static func retryAfter(_ header: String?, now: Date) -> Int64 {
        let nowMs = Int64(now.timeIntervalSince1970 * 1000)
        guard let value = header.flatMap({ Int64($0.trimmingCharacters(in: .whitespaces)) }), value >= 0 else {
            return nowMs + 1000
        }
        // A UNIX time in ms is a 13-digit number; anything below a year in ms is seconds from now.
        return value > 1_000_000_000_000 ? value : nowMs + value * 1000
    }

    /// Percent-encodes all but RFC 3986's unreserved characters (Apple's ids are digits).
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    struct ErrorBody: Decodable {
        var errorCode: Int?
        var errorMessage: String?
    }
}

extension Duration {
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
