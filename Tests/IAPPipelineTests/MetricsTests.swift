import AppleJWS
import AsyncHTTPClient
import Foundation
import IAPCLI
import PipelineCore
import IAPStages
import LoopbackPort
import Logging
import NIOCore
import ServiceLifecycle
import TestSupport
import PipelineTestSupport
import Testing

/// `/metrics` in the Prometheus text format: requests, jobs, Apple's calls and the queues, with
/// bounded labels, moving as receipts flow.
@Suite(.serialized) struct MetricsTests {
    /// The value of the one sample of `name` whose labels include all of `labels`, or `nil`.
    static func value(_ text: String, _ name: String, _ labels: [String: String]) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            let matches = labels.allSatisfy { line.contains("\($0.key)=\"\($0.value)\"") }
            if matches, let number = line.split(separator: " ").last.flatMap({ Double($0) }) { return number }
        }
        return nil
    }

    static func scrape(_ pipeline: PipelineHarness) async throws -> String {
        let reply = try await pipeline.http.execute(HTTPClientRequest(url: pipeline.intake.baseURL + "/metrics"), timeout: .seconds(10))
        #expect(reply.status == .ok)
        #expect(reply.headers.first(name: "content-type")?.hasPrefix("text/plain") == true)
        return String(buffer: try await reply.body.collect(upTo: 1 << 22))
    }

    @Test func theIntakesMetricsMoveAsReceiptsFlow() async throws {
        try await withPipeline { pipeline in
            _ = try await pipeline.terminal(try await pipeline.submit(receipt([gold("m1")])))
            let first = try await Self.scrape(pipeline)
            let accepted = try #require(Self.value(first, "iap_http_requests_total", ["route": "/v1/receipts", "method": "POST", "status": "202"]))
            #expect(Self.value(first, "iap_jobs_total", ["stage": "grant", "outcome": "grant_purchases"]).map { $0 >= 1 } == true)
            #expect(Self.value(first, "iap_apple_requests_total", ["endpoint": "verify_receipt", "status": "200"]).map { $0 >= 1 } == true)
            #expect(first.contains("iap_job_duration_seconds_bucket") && first.contains("iap_http_request_duration_seconds_bucket"))
            // Labels never name a ticket or a user.
            #expect(!first.contains("player-1"))

            _ = try await pipeline.terminal(try await pipeline.submit(receipt([gold("m2")])))
            let second = try await Self.scrape(pipeline)
            // At least one more (other suites may submit in the same process meanwhile).
            #expect(Self.value(second, "iap_http_requests_total", ["route": "/v1/receipts", "method": "POST", "status": "202"])
                .map { $0 >= accepted + 1 } == true)
            // The queues, sampled by the intake.
            try await until("the queues are sampled") {
                Self.value(try await Self.scrape(pipeline), "iap_queue_depth", ["queue": "verify"]) != nil
            }
        }
    }

    /// A Redis restart shows as reconnects; a wait for the fleet's Server API budget as a rate-limiter wait.
    @Test func reconnectsAndRateLimiterWaitsAreCounted() async throws {
        try await withPipeline(serverAPI: true, environment: ["IAP_APPLE_API_MAX_RPS": "1"]) { pipeline in
            _ = try await pipeline.terminal(try await pipeline.submit(receipt([gold("r1")])))
            let before = Self.value(try await Self.scrape(pipeline), "iap_redis_reconnects_total", [:]) ?? 0
            try await pipeline.redisServer.restart()
            // A client resends on 503 while the intake's connections dial again.
            let again = receipt([gold("r2")]).receiptData()
            let ticket = try await pipeline.postUntilAccepted(["receipt_data": again, "user_id": "player-1"], within: .seconds(20))
                .json["ticket"] as? String
            _ = try await pipeline.terminal(try #require(ticket))
            try await until("the reconnects are counted") {
                (Self.value(try await Self.scrape(pipeline), "iap_redis_reconnects_total", [:]) ?? 0) > before
            }
            // The fleet holds the lookup endpoint for a while (as after Apple's 429): a lookup
            // asked meanwhile waits for its permit, or is deferred to the hold's end. (Two lookups
            // in a row at 1 call a second were once too far apart on a loaded machine to wait.) A
            // loaded machine can also reach the lookups after the hold has ended, and then nothing
            // waits: another round holds the endpoint again, at most five.
            var waited = 0.0
            var text = ""
            for round in 1...5 where waited < 1 {
                let holdEnds = currentTimeMs() + 5000
                for environment in ["production", "sandbox"] {
                    try await pipeline.store.holdAPIEndpoint(environment: environment, endpoint: "transaction_info", untilMs: holdEnds)
                }
                let ids = ["rl-\(round)-1", "rl-\(round)-2"]
                for id in ids {
                    _ = try pipeline.simulator.serverAPI.register(JWSTransaction(
                        transactionID: id, bundleID: PipelineHarness.bundleID, productID: "gold.100", type: "Consumable", environment: "Sandbox"))
                }
                var tickets: [String] = []
                for id in ids {
                    let reply = try await pipeline.post(["transaction_id": id, "user_id": "player-1"])
                    tickets.append(try #require(reply.json["ticket"] as? String))
                }
                for ticket in tickets { #expect(try await pipeline.terminal(ticket).status == .granted) }
                text = try await Self.scrape(pipeline)
                waited = (Self.value(text, "iap_apple_rate_limit_waits_total", ["outcome": "waited"]) ?? 0)
                    + (Self.value(text, "iap_apple_rate_limit_waits_total", ["outcome": "deferred"]) ?? 0)
            }
            #expect(waited >= 1, "\(text.split(separator: "\n").filter { $0.contains("rate_limit") })")
        }
    }

    /// A stage worker's `IAP_METRICS_PORT`: the same text on its own port.
    @Test func aWorkersMetricsServerServesTheRegistry() async throws {
        let port = try LoopbackPort.free()
        let server = MetricsServer(registry: bootstrapMetrics(), host: "127.0.0.1", port: port, logger: Logger(label: "metrics-test"))
        PipelineMetrics.deadLettered(stage: .verify, reason: "metrics_test")
        let running = Task { try await server.run() }
        defer { running.cancel() }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        var text = ""
        try await until("the metrics server answers") {
            guard let reply = try? await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(2))
            else { return false }
            text = String(buffer: try await reply.body.collect(upTo: 1 << 22))
            return reply.status == .ok
        }
        try await http.shutdown()
        #expect(Self.value(text, "iap_dead_letters_total", ["stage": "verify", "reason": "metrics_test"]).map { $0 >= 1 } == true)
    }
}
