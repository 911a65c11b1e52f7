import AsyncHTTPClient
import ClusterHarness
import Foundation
import IAPClient
import LocalServers

/// The benchmark: per scenario, a fresh pipeline of real processes on loopback is measured stage
/// by stage, end to end, at half of its peak, idle, and against redis-benchmark's ceiling.
package struct Bench: Sendable {
    package let settings: BenchSettings
    /// Where progress lines go (the tables are the caller's to print).
    package let progress: @Sendable (String) -> Void

    package init(settings: BenchSettings, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.settings = settings
        self.progress = progress
    }

    package func run() async throws -> [ScenarioResult] {
        try ClusterSettings(binDirectory: settings.binDirectory).checkExecutables()
        _ = try Executable.find("redis-benchmark")
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(2)))
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: settings.clientConcurrency)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var results: [ScenarioResult] = []
        do {
            for scenario in settings.scenarios {
                let started = ContinuousClock.now
                let result = try await ScenarioRun(scenario: scenario, settings: settings, http: http, progress: progress).measure()
                progress(String(
                    format: "%@: %.0f receipts/s end to end, p99 %.1f ms at half peak, %.1f round trips/receipt (%.0f s)",
                    scenario.name, result.endToEndPerSecond, result.latency.p99, result.roundTripsPerReceipt,
                    (ContinuousClock.now - started) / .seconds(1)))
                results.append(result)
            }
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        return results
    }

    /// Each scenario's cluster: the pipeline's production defaults, one deduper and one granter.
    static func clusterSettings(_ scenario: BenchScenario, settings: BenchSettings) -> ClusterSettings {
        var cluster = ClusterSettings(binDirectory: settings.binDirectory)
        if settings.signRequests { cluster.clientSigner = RequestSigner(keyID: "bench", secret: "bench-secret-0123456789abcdef") }
        cluster.durability = scenario.durability
        cluster.appleLatencyMs = scenario.appleLatencyMs
        cluster.processesPerStage = [.verify: scenario.verifiers, .dedupe: 1, .grant: 1]
        cluster.workerConcurrency = scenario.concurrency
        cluster.lease = .seconds(30)
        cluster.appleTimeout = .seconds(15)
        cluster.retryBase = .seconds(1)
        cluster.retryMax = .seconds(600)
        return cluster
    }
}
