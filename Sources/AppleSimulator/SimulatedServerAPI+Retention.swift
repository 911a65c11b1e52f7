import AppleJWS
import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat

/// The Retention Messaging API as Apple plays it: the real-time URL per environment, messages and
/// default messages (taken as `APPROVED` at once), the performance test (sandbox requests signed
/// by apple-sim's authority, sent to the sandbox real-time URL, timed), and on demand
/// (`POST /control/retention-requests`) one real-time request, as when a subscriber opens the
/// subscription's page.
extension SimulatedServerAPI {
    struct RetentionState {
        var realtimeURLs: [String: String] = [:]
        /// By environment, then message id: header and body.
        var messages: [String: [String: [String: String]]] = [:]
        /// By environment, then "<product>/<locale>": message id.
        var defaults: [String: [String: String]] = [:]
        var tests: [String: PerformanceTest] = [:]
        var config = PerformanceConfig()
    }

    /// Apple's `PerformanceTestConfig`: the test's shape and what passing means.
    struct PerformanceConfig: Codable, Sendable {
        var maxConcurrentRequests = 10
        var totalRequests = 100
        var totalDuration: Int64 = 60_000
        var responseTimeThreshold: Int64 = 700
        var successRateThreshold = 95

        var json: [String: any Sendable] {
            [
                "maxConcurrentRequests": maxConcurrentRequests, "totalRequests": totalRequests, "totalDuration": totalDuration,
                "responseTimeThreshold": responseTimeThreshold, "successRateThreshold": successRateThreshold,
            ]
        }
    }

    struct PerformanceTest {
        var config: PerformanceConfig
        var target: String
        /// Each request's time (ms) and whether it succeeded: 200, a JSON object, within the threshold.
        var times: [Int64] = []
        var failures: [String: Int] = [:]
        var done = 0
    }

    /// What one real-time request got: the HTTP status, the body, how long it took.
    public struct RealtimeResult: Sendable {
        public var status: Int?
        /// The answer's bytes, when it was a JSON object.
        public var body: Data?
        public var milliseconds: Int64
        public var failure: String?
    }

    /// A real-time request signed as the App Store signs it.
    public func signedRealtimeRequest(
        originalTransactionID: String, productID: String, appAppleID: Int64, environment: String, locale: String = "en-US",
        requestIdentifier: String = UUID().uuidString.lowercased(), signedDate: Int64 = Int64(Date().timeIntervalSince1970 * 1000)
    ) throws -> String {
        try authority.signer.sign(payload: RealtimeRequest(
            originalTransactionID: originalTransactionID, appAppleID: appAppleID, productID: productID, userLocale: locale,
            requestIdentifier: requestIdentifier, signedDate: signedDate, environment: environment))
    }

    /// Posts `{"signedPayload": …}` to `url` and reads the answer, as the App Store does.
    public static func sendRealtime(_ signedPayload: String, to url: String, timeout: Duration = .seconds(5)) async -> RealtimeResult {
        let start = ContinuousClock.now
        func elapsed() -> Int64 { Int64((ContinuousClock.now - start) / .milliseconds(1)) }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        do {
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload])))
            let response = try await HTTPClient.shared.execute(request, timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
            let bytes = try await response.body.collect(upTo: 1 << 16)
            let body = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any]
            return RealtimeResult(
                status: Int(response.status.code), body: body == nil ? nil : Data(buffer: bytes), milliseconds: elapsed(),
                failure: response.status == .ok ? (body == nil ? "INVALID_RESPONSE" : nil) : "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
        } catch {
            return RealtimeResult(status: nil, body: nil, milliseconds: elapsed(), failure: "\(error)".contains("imeout") ? "TIMED_OUT" : "NO_RESPONSE")
        }
    }

    func registerRetention(on router: Router<some RequestContext>, environment: String) {
        let prefix = (environment == "Sandbox" ? Self.sandboxPrefix : "") + "/inApps/v1/messaging"
        router.put(RouterPath(stringLiteral: prefix + "/realtime/url")) { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            return try self.answer(request, environment: environment, endpoint: "realtime_url") {
                self.setRealtimeURL(Data(buffer: body), environment: environment)
            }
        }
        router.get(RouterPath(stringLiteral: prefix + "/realtime/url")) { request, _ in
            try self.answer(request, environment: environment, endpoint: "realtime_url") {
                guard let url = self.retention.withLockedValue({ $0.realtimeURLs[environment] }) else {
                    return Self.error(.notFound, 4_040_020, "Realtime URL not found.")
                }
                return (try? Self.json(.ok, ["realtimeURL": url])) ?? Response(status: .internalServerError)
            }
        }
        router.delete(RouterPath(stringLiteral: prefix + "/realtime/url")) { request, _ in
            try self.answer(request, environment: environment, endpoint: "realtime_url") {
                self.retention.withLockedValue { $0.realtimeURLs[environment] = nil }
                return Response(status: .ok)
            }
        }
        router.put(RouterPath(stringLiteral: prefix + "/message/{id}")) { request, context in
            let body = try await request.body.collect(upTo: 1 << 16)
            return try self.answer(request, environment: environment, endpoint: "message") {
                self.uploadMessage(context.parameters.get("id") ?? "", body: Data(buffer: body), environment: environment)
            }
        }
        router.delete(RouterPath(stringLiteral: prefix + "/message/{id}")) { request, context in
            try self.answer(request, environment: environment, endpoint: "message") {
                let id = (context.parameters.get("id") ?? "").lowercased()
                let removed = self.retention.withLockedValue { $0.messages[environment]?.removeValue(forKey: id) != nil }
                return removed ? Response(status: .ok) : Self.error(.notFound, 4_040_012, "Message not found.")
            }
        }
        router.get(RouterPath(stringLiteral: prefix + "/message/list")) { request, _ in
            try self.answer(request, environment: environment, endpoint: "message_list") {
                let ids = self.retention.withLockedValue { $0.messages[environment].map { Array($0.keys) } ?? [] }.sorted()
                let items: [[String: any Sendable]] = ids.map { ["messageIdentifier": $0, "messageState": "APPROVED"] }
                return (try? Self.json(.ok, ["messageIdentifiers": items])) ?? Response(status: .internalServerError)
            }
        }
        router.put(RouterPath(stringLiteral: prefix + "/default/{product}/{locale}")) { request, context in
            let body = try await request.body.collect(upTo: 1 << 16)
            return try self.answer(request, environment: environment, endpoint: "default_message") {
                self.configureDefault(
                    product: context.parameters.get("product") ?? "", locale: context.parameters.get("locale") ?? "",
                    body: Data(buffer: body), environment: environment)
            }
        }
        router.post(RouterPath(stringLiteral: prefix + "/performanceTest")) { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            return try self.answer(request, environment: environment, endpoint: "performance_test") {
                self.startPerformanceTest(Data(buffer: body), environment: environment)
            }
        }
        router.get(RouterPath(stringLiteral: prefix + "/performanceTest/result/{id}")) { request, context in
            try self.answer(request, environment: environment, endpoint: "performance_test_result") {
                self.performanceTestResult(context.parameters.get("id") ?? "")
            }
        }
    }

    /// `POST /control/retention-requests` `{original_transaction_id, product_id, app_apple_id,
    /// environment?, locale?, request_identifier?, signed_date?, url?}`: one real-time request,
    /// signed, sent to `url` or the environment's real-time URL; answers what it got.
    /// `POST /control/retention-performance` `{max_concurrent_requests?, total_requests?,
    /// response_time_threshold?}`: the next performance tests' shape.
    func registerRetentionControl(on router: Router<some RequestContext>) {
        router.post("/control/retention-requests") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            let order = try JSONDecoder().decode(RealtimeOrder.self, from: Data(buffer: body))
            let environment = order.environment ?? "Production"
            guard let url = order.url ?? self.retention.withLockedValue({ $0.realtimeURLs[environment] }) else {
                return Self.error(.badRequest, 0, "no real-time URL for \(environment)")
            }
            let signed = try self.signedRealtimeRequest(
                originalTransactionID: order.originalTransactionID, productID: order.productID, appAppleID: order.appAppleID,
                environment: environment, locale: order.locale ?? "en-US",
                requestIdentifier: order.requestIdentifier ?? UUID().uuidString.lowercased(),
                signedDate: order.signedDate ?? Int64(Date().timeIntervalSince1970 * 1000))
            let result = await Self.sendRealtime(signed, to: url)
            var answer: [String: Any] = ["signedPayload": signed, "milliseconds": result.milliseconds]
            if let status = result.status { answer["status"] = status }
            if let body = result.body { answer["body"] = try JSONSerialization.jsonObject(with: body) }
            if let failure = result.failure { answer["failure"] = failure }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(data: try JSONSerialization.data(withJSONObject: answer))))
        }
        router.post("/control/retention-performance") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            let order = try JSONDecoder().decode(PerformanceOrder.self, from: Data(buffer: body))
            self.retention.withLockedValue { state in
                if let value = order.maxConcurrentRequests { state.config.maxConcurrentRequests = max(1, value) }
                if let value = order.totalRequests { state.config.totalRequests = max(1, value) }
                if let value = order.responseTimeThreshold { state.config.responseTimeThreshold = value }
            }
            return Response(status: .ok)
        }
    }

    struct RealtimeOrder: Decodable {
        var originalTransactionID: String
        var productID: String
        var appAppleID: Int64
        var environment: String?
        var locale: String?
        var requestIdentifier: String?
        var signedDate: Int64?
        var url: String?

        enum CodingKeys: String, CodingKey {
            case originalTransactionID = "original_transaction_id"
            case productID = "product_id"
            case appAppleID = "app_apple_id"
            case environment, locale, url
            case requestIdentifier = "request_identifier"
            case signedDate = "signed_date"
        }
    }

    struct PerformanceOrder: Decodable {
        var maxConcurrentRequests: Int?
        var totalRequests: Int?
        var responseTimeThreshold: Int64?

        enum CodingKeys: String, CodingKey {
            case maxConcurrentRequests = "max_concurrent_requests"
            case totalRequests = "total_requests"
            case responseTimeThreshold = "response_time_threshold"
        }
    }

    static func error(_ status: HTTPResponse.Status, _ code: Int, _ message: String) -> Response {
        (try? json(status, ["errorCode": code, "errorMessage": message])) ?? Response(status: status)
    }

    func setRealtimeURL(_ body: Data, environment: String) -> Response {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any], let url = object["realtimeURL"] as? String,
            url.hasPrefix("https://") || url.hasPrefix("http://127.0.0.1") || url.hasPrefix("http://localhost"), url.utf8.count <= 256
        else {
            return Self.error(.badRequest, 4_000_202, "Invalid realtime URL.")
        }
        // Production takes a URL only once a sandbox performance test passed.
        if environment == "Production" {
            let passed = retention.withLockedValue { $0.tests.values.contains { Self.status(of: $0) == "PASS" } }
            guard passed else { return Self.error(.forbidden, 4_030_020, "A passing performance test is required first.") }
        }
        retention.withLockedValue { $0.realtimeURLs[environment] = url }
        return Response(status: .ok)
    }

    func uploadMessage(_ id: String, body: Data, environment: String) -> Response {
        guard let uuid = UUID(uuidString: id)?.uuidString.lowercased() else {
            return Self.error(.badRequest, 4_000_023, "Invalid message identifier.")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any], let header = object["header"] as? String,
            let text = object["body"] as? String, !header.isEmpty, header.count <= 66, !text.isEmpty, text.count <= 144
        else {
            return Self.error(.badRequest, 4_000_024, "Invalid message: header (1-66) and body (1-144) are required.")
        }
        let stored: Bool = retention.withLockedValue { state in
            if state.messages[environment]?[uuid] != nil { return false }
            state.messages[environment, default: [:]][uuid] = ["header": header, "body": text]
            return true
        }
        return stored ? Response(status: .ok) : Self.error(.conflict, 4_090_001, "Message already exists.")
    }

    func configureDefault(product: String, locale: String, body: Data, environment: String) -> Response {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            let id = (object["messageIdentifier"] as? String).flatMap({ UUID(uuidString: $0)?.uuidString.lowercased() })
        else {
            return Self.error(.badRequest, 4_000_023, "Invalid message identifier.")
        }
        let known = retention.withLockedValue { state in
            guard state.messages[environment]?[id] != nil else { return false }
            state.defaults[environment, default: [:]]["\(product)/\(locale)"] = id
            return true
        }
        return known ? Response(status: .ok) : Self.error(.notFound, 4_040_012, "Message not found.")
    }

    /// The default message of a product and locale, if configured.
    public func defaultMessage(product: String, locale: String, environment: String) -> String? {
        retention.withLockedValue { $0.defaults[environment]?["\(product)/\(locale)"] }
    }

    func startPerformanceTest(_ body: Data, environment: String) -> Response {
        guard environment == "Sandbox" else { return Self.error(.badRequest, 4_000_000, "The performance test runs in the sandbox.") }
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            let original = object["originalTransactionId"] as? String, !original.isEmpty
        else {
            return Self.error(.badRequest, 4_000_028, "Invalid original transaction id.")
        }
        let product = state.withLockedValue { $0.transactions[original]?.productID } ?? ""
        let id = UUID().uuidString.lowercased()
        let started: (PerformanceConfig, String)? = retention.withLockedValue { state in
            guard let url = state.realtimeURLs["Sandbox"] else { return nil }
            state.tests[id] = PerformanceTest(config: state.config, target: url)
            return (state.config, url)
        }
        guard let (config, url) = started else { return Self.error(.notFound, 4_040_020, "Realtime URL not found.") }
        Task { await self.runPerformanceTest(id, config: config, url: url, original: original, product: product) }
        return (try? Self.json(.ok, ["config": config.json, "requestId": id])) ?? Response(status: .internalServerError)
    }

    /// `config.totalRequests` requests, `maxConcurrentRequests` at a time, each its own request id.
    func runPerformanceTest(_ id: String, config: PerformanceConfig, url: String, original: String, product: String) async {
        let perWorker: [Int] = (0..<config.maxConcurrentRequests).map { (worker: Int) -> Int in
            Array(stride(from: worker, to: config.totalRequests, by: config.maxConcurrentRequests)).count
        }
        await withTaskGroup(of: Void.self) { group in
            for count in perWorker {
                group.addTask {
                    for _ in 0..<count {
                        let signed = (try? self.signedRealtimeRequest(
                            originalTransactionID: original, productID: product, appAppleID: 0, environment: "Sandbox")) ?? ""
                        var result = await Self.sendRealtime(signed, to: url, timeout: .milliseconds(config.totalDuration))
                        if result.failure == nil, result.milliseconds > config.responseTimeThreshold { result.failure = "TIMED_OUT" }
                        self.retention.withLockedValue { state in
                            state.tests[id]?.times.append(result.milliseconds)
                            if let failure = result.failure { state.tests[id]?.failures[failure, default: 0] += 1 }
                            state.tests[id]?.done += 1
                        }
                    }
                }
            }
        }
    }

    static func status(of test: PerformanceTest) -> String {
        guard test.done >= test.config.totalRequests else { return "PENDING" }
        return successRate(test) >= test.config.successRateThreshold ? "PASS" : "FAIL"
    }

    static func successRate(_ test: PerformanceTest) -> Int {
        guard test.done > 0 else { return 0 }
        return (test.done - test.failures.values.reduce(0, +)) * 100 / test.done
    }

    func performanceTestResult(_ id: String) -> Response {
        guard let test = retention.withLockedValue({ $0.tests[id.lowercased()] }) else {
            return Self.error(.notFound, 4_040_021, "Performance test not found.")
        }
        let sorted = test.times.sorted()
        func percentile(_ p: Double) -> Int64 {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
        }
        let average = sorted.isEmpty ? 0 : sorted.reduce(0, +) / Int64(sorted.count)
        var answer: [String: any Sendable] = [
            "config": test.config.json, "target": test.target, "result": Self.status(of: test), "successRate": Self.successRate(test),
            "numPending": test.config.totalRequests - test.done,
            "responseTimes": [
                "average": average, "p50": percentile(0.5), "p90": percentile(0.9), "p95": percentile(0.95), "p99": percentile(0.99),
            ] as [String: any Sendable],
        ]
        if !test.failures.isEmpty {
            let failures: [String: any Sendable] = test.failures.mapValues { $0 }
            answer["failures"] = failures
        }
        return (try? Self.json(.ok, answer)) ?? Response(status: .internalServerError)
    }
}
