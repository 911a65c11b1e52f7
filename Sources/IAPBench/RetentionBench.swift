import AppleJWS
import AsyncHTTPClient
import ClusterHarness
@preconcurrency import Crypto
import Foundation
import PipelineCore
import IAPStages

/// The `retention` scenario: Apple's real-time retention requests answered by a real intake
/// (`POST /v1/apple/retention`) as Apple's performance test sends them, played by apple-sim. A
/// subscriber with two years of monthly periods and `purchases` consumables is granted through the
/// real pipeline; `iapctl apple retention url` points the sandbox's real-time URL at the intake,
/// and `iapctl apple retention performance-test` runs the test, once at Apple's shape (10 at a
/// time) and once at each of `concurrency`. Reports each run's response times as apple-sim timed
/// them (over HTTP, from signing to the answer read), and the intake's CPU a request.
package struct RetentionBench: Sendable {
    package var requests: Int
    package var concurrency: [Int]
    package var purchases: Int

    package init(requests: Int = 2000, concurrency: [Int] = [10, 64], purchases: Int = 50) {
        self.requests = requests
        self.concurrency = concurrency
        self.purchases = purchases
    }

    static let original = "7600000000000001"
    static let message = "0f6bd64c-3b1e-4d4e-9d3f-5a1e2b7c9d01"

    static let catalog = #"""
        {"products": {"gems.small": {"type": "consumable"},
                      "vip.monthly": {"type": "auto_renewable", "entitlements": ["premium"], "subscription_group": "vip",
                                      "offers": {"comeback": {"eligibility": "any"}}},
                      "vip.yearly": {"type": "auto_renewable", "entitlements": ["premium"], "subscription_group": "vip"}},
         "retention": [
           {"name": "refunders", "when": {"refunds": {"at_least": 1}}, "message": "\#(message)"},
           {"name": "loyal", "when": {"tenure_months": {"at_least": 6}, "product": ["vip.monthly"]},
            "promotional_offer": "comeback", "message": "\#(message)"},
           {"name": "all", "alternate_product": "vip.yearly", "message": "\#(message)"}]}
        """#

    package func run(binDirectory: URL, workDirectory: URL, progress: @Sendable (String) -> Void) async throws -> RetentionBenchResult {
        let directory = workDirectory.appendingPathComponent("retention")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let products = directory.appendingPathComponent("retention-products.json")
        try Self.catalog.write(to: products, atomically: true, encoding: .utf8)
        let offerKey = directory.appendingPathComponent("SubscriptionKey_BENCHOFFER.p8")
        try P256.Signing.PrivateKey().pemRepresentation.write(to: offerKey, atomically: true, encoding: .utf8)
        var settings = ClusterSettings(binDirectory: binDirectory)
        settings.processesPerStage = [.verify: 1, .dedupe: 1, .grant: 1]
        settings.workerConcurrency = 64
        settings.appleLatencyMs = 0
        settings.durability = .none
        settings.logLevel = "warning"
        settings.environment = [
            "IAP_PRODUCTS_FILE": products.path, "IAP_OFFER_KEY_ID": "BENCHOFFER", "IAP_OFFER_PRIVATE_KEY_FILE": offerKey.path,
        ]
        var client = HTTPClient.Configuration(timeout: .init(connect: .seconds(2)))
        client.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: client)
        let cluster = try LocalCluster(settings: settings, directory: directory.appendingPathComponent("cluster"), http: http)
        do {
            let result = try await measure(cluster, http: http, progress: progress)
            let unclean = await cluster.stop() + (await cluster.crashes())
            try await http.shutdown()
            guard unclean.isEmpty else { throw BenchError("retention: \(unclean.joined(separator: "; "))") }
            return result
        } catch {
            _ = await cluster.stop()
            try? await http.shutdown()
            throw error
        }
    }

    private func measure(_ cluster: LocalCluster, http: HTTPClient, progress: @Sendable (String) -> Void) async throws -> RetentionBenchResult {
        try await cluster.start()
        let granted = try await seed(cluster, http: http)
        progress("retention: a subscriber with \(granted) purchases on the books (24 monthly periods)")
        let url = try await cluster.iapctl([
            "apple", "retention", "url", "--set", cluster.intakeURL + "/v1/apple/retention", "--environment", "sandbox",
        ])
        guard url.status == 0 else { throw BenchError("retention: iapctl apple retention url: \(url.output)") }
        guard let intake = await cluster.processesByKind()["iap-intake"]?.first else { throw BenchError("retention: no intake") }
        var runs: [RetentionBenchResult.Run] = []
        for concurrent in concurrency {
            try await cluster.configureRetentionTest(totalRequests: requests, maxConcurrentRequests: concurrent)
            guard let before = ProcessUsage.read(pid: intake.pid) else { throw BenchError("retention: the intake is gone") }
            let started = ContinuousClock.now
            let test = try await cluster.iapctl([
                "apple", "retention", "performance-test", "--original-transaction-id", Self.original, "--wait", "600", "--json",
            ])
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            guard let after = ProcessUsage.read(pid: intake.pid) else { throw BenchError("retention: the intake is gone") }
            guard let line = test.output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
                let result = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let times = result["responseTimes"] as? [String: Any]
            else {
                throw BenchError("retention: the performance test answered no result (exit \(test.status)): \(test.output.suffix(400))")
            }
            func ms(_ name: String) -> Int { (times[name] as? Int) ?? -1 }
            let run = RetentionBenchResult.Run(
                concurrency: concurrent, requests: requests, result: result["result"] as? String ?? "?",
                successRate: result["successRate"] as? Int ?? -1, averageMs: ms("average"), p50Ms: ms("p50"), p90Ms: ms("p90"),
                p99Ms: ms("p99"), requestsPerSecond: Double(requests) / seconds,
                intakeCPUMsPerRequest: (after.cpuSeconds - before.cpuSeconds) * 1000 / Double(requests))
            progress("retention: \(run.summary)")
            runs.append(run)
        }
        return RetentionBenchResult(purchasesOnTheBooks: granted, runs: runs)
    }

    /// The subscriber's 24 monthly periods and `purchases` consumables, granted through the pipeline.
    private func seed(_ cluster: LocalCluster, http: HTTPClient) async throws -> Int {
        let now = Int64(Date().timeIntervalSince1970 * 1000), month: Int64 = 2_629_746_000
        var signed: [SignedPurchase] = []
        for period in 0..<24 {
            let id = period == 0 ? Self.original : String(7_600_000_000_001_000 + period)
            let start = now - Int64(24 - period) * month
            signed.append(SignedPurchase(userID: "whale", receiptData: try await cluster.registerTransaction(JWSTransaction(
                transactionID: id, originalTransactionID: Self.original, webOrderLineItemID: "w\(id)", bundleID: LocalCluster.bundleID,
                productID: "vip.monthly", purchaseDate: start, expiresDate: start + month + 3_600_000, type: "Auto-Renewable Subscription",
                signedDate: now, environment: "Sandbox"))))
        }
        for index in 0..<purchases {
            let id = String(7_600_000_000_100_000 + index)
            signed.append(SignedPurchase(userID: "whale", receiptData: try await cluster.registerTransaction(JWSTransaction(
                transactionID: id, bundleID: LocalCluster.bundleID, productID: "gems.small", purchaseDate: now - Int64(index) * 60_000,
                type: "Consumable", signedDate: now, environment: "Sandbox"))))
        }
        // The periods in order (a later one is a renewal of the first), then the consumables at once.
        var accepted = 0
        let load = cluster.loadClient(http)
        for purchase in signed.prefix(24) where await load.submit(purchase).ticket != nil { accepted += 1 }
        accepted += await load.submitAll(Array(signed.dropFirst(24)), perSecond: nil, concurrency: 16).filter { $0.ticket != nil }.count
        guard accepted == signed.count else { throw BenchError("retention: \(signed.count - accepted) purchases not accepted") }
        let deadline = ContinuousClock.now + .seconds(60)
        while try await cluster.grantedCount(user: "whale") < signed.count {
            guard ContinuousClock.now < deadline else { throw BenchError("retention: the purchases were not all granted in 60 s") }
            try await Task.sleep(for: .milliseconds(200))  // the stages' progress, read from the books
        }
        return signed.count
    }

    struct SignedPurchase: SubmittableReceipt {
        var userID: String
        var receiptData: String
        var evidenceField: String { "signed_transaction" }
    }
}

/// The retention scenario's figures.
package struct RetentionBenchResult: Sendable, Codable {
    package var purchasesOnTheBooks: Int
    package var runs: [Run]

    package struct Run: Sendable, Codable {
        package var concurrency: Int
        package var requests: Int
        package var result: String
        package var successRate: Int
        package var averageMs: Int
        package var p50Ms: Int
        package var p90Ms: Int
        package var p99Ms: Int
        package var requestsPerSecond: Double
        package var intakeCPUMsPerRequest: Double

        package var summary: String {
            String(
                format: "%d requests, %d at a time: %@ (%d %%), p50 %d ms, p90 %d ms, p99 %d ms, %.0f requests/s, intake %.3f ms CPU a request",
                requests, concurrency, result, successRate, p50Ms, p90Ms, p99Ms, requestsPerSecond, intakeCPUMsPerRequest)
        }
    }
}
