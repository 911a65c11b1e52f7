import AsyncHTTPClient
import ClusterHarness
import Foundation
import PipelineCore
import IAPStages
import NIOCore
import NIOFoundationCompat

/// The `wait` scenario: `clients` receipts submitted while no worker runs, one client per ticket
/// waiting on `GET /v1/receipts/{ticket}?wait=30`, then the workers start. Reports what the waiting
/// costs the intake (memory, CPU while they wait, Redis connections) and how soon every client has
/// its result.
package struct WaitBench: Sendable {
    package var clients: Int
    /// How long the intake is watched while every client waits.
    package var idleSeconds: Double

    package init(clients: Int = 5000, idleSeconds: Double = 5) {
        self.clients = clients
        self.idleSeconds = idleSeconds
    }

    package func run(binDirectory: URL, workDirectory: URL, progress: @Sendable (String) -> Void) async throws -> WaitBenchResult {
        var settings = ClusterSettings(binDirectory: binDirectory)
        settings.processesPerStage = [.verify: 1, .dedupe: 1, .grant: 1]
        settings.workerConcurrency = 64
        settings.lease = .seconds(30)
        settings.appleTimeout = .seconds(15)
        let directory = workDirectory.appendingPathComponent("wait")
        try? FileManager.default.removeItem(at: directory)
        var submitting = HTTPClient.Configuration(timeout: .init(connect: .seconds(2)))
        submitting.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: submitting)
        var waiting = HTTPClient.Configuration(timeout: .init(connect: .seconds(10)))
        waiting.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: clients + 16)
        let waitHTTP = HTTPClient(eventLoopGroupProvider: .singleton, configuration: waiting)
        let cluster = try LocalCluster(settings: settings, directory: directory, http: http)
        do {
            let result = try await measure(cluster, http: http, waitHTTP: waitHTTP, progress: progress)
            let unclean = await cluster.stop() + (await cluster.crashes())
            try await http.shutdown()
            try await waitHTTP.shutdown()
            guard unclean.isEmpty else { throw BenchError("wait: \(unclean.joined(separator: "; "))") }
            return result
        } catch {
            _ = await cluster.stop()
            try? await http.shutdown()
            try? await waitHTTP.shutdown()
            throw error
        }
    }

    private func measure(
        _ cluster: LocalCluster, http: HTTPClient, waitHTTP: HTTPClient, progress: @Sendable (String) -> Void
    ) async throws -> WaitBenchResult {
        try await cluster.start(workers: false)
        let submissions = await cluster.loadClient(http).submitAll(BenchReceipt.batch("wait", clients), perSecond: nil, concurrency: 64)
        let tickets = submissions.compactMap(\.ticket)
        guard tickets.count == clients else { throw BenchError("wait: \(clients - tickets.count) receipts not accepted") }
        guard let intake = await cluster.processesByKind()["iap-intake"]?.first else { throw BenchError("wait: no intake") }
        let pid = intake.pid
        guard let before = ProcessUsage.read(pid: pid) else { throw BenchError("wait: the intake is gone") }
        let baseFDs = Self.openFiles(pid)
        progress("wait: \(clients) tickets queued; \(clients) clients start waiting")

        let url = cluster.intakeURL
        let answers = Task {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for ticket in tickets {
                    group.addTask {
                        let response = try await waitHTTP.execute(HTTPClientRequest(url: url + "/v1/receipts/\(ticket)?wait=30"), timeout: .seconds(40))
                        let body = try await response.body.collect(upTo: 1 << 16)
                        let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
                        return json?["status"] as? String == "granted"
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
        }
        // Every client is connected (one socket each on the intake) before the intake is watched.
        let connected = ContinuousClock.now
        while Self.openFiles(pid) - baseFDs < clients {
            guard ContinuousClock.now - connected < .seconds(30) else {
                answers.cancel()
                throw BenchError("wait: only \(Self.openFiles(pid) - baseFDs) of \(clients) clients connected in 30 s")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .milliseconds(500))
        guard let idleStart = ProcessUsage.read(pid: pid) else { throw BenchError("wait: the intake is gone") }
        try await Task.sleep(for: .seconds(idleSeconds))
        guard let idleEnd = ProcessUsage.read(pid: pid) else { throw BenchError("wait: the intake is gone") }
        let info = try await cluster.runTool("redis-cli", ["-p", String(cluster.redisPort), "INFO", "clients"])
        let redisClients = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("connected_clients:") }
            .flatMap { Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) } ?? -1
        progress("wait: every client waits; the workers start")

        let released = ContinuousClock.now
        for stage in [Stage.verify, .dedupe, .grant] { _ = try await cluster.addWorker(stage) }
        let granted = try await answers.value
        let answeredSeconds = (ContinuousClock.now - released) / .seconds(1)
        guard let after = ProcessUsage.read(pid: pid) else { throw BenchError("wait: the intake is gone") }
        let megabyte = 1024.0 * 1024
        return WaitBenchResult(
            clients: clients, granted: granted, intakeRSSBeforeMB: Double(before.rssBytes) / megabyte,
            intakeRSSWaitingMB: Double(idleEnd.rssBytes) / megabyte,
            bytesPerWaitingClient: Double(idleEnd.rssBytes - before.rssBytes) / Double(clients),
            idleCPUPercent: (idleEnd.cpuSeconds - idleStart.cpuSeconds) / idleSeconds * 100,
            redisConnectedClients: redisClients, answeredSeconds: answeredSeconds,
            intakeCPUMsWhileAnswering: (after.cpuSeconds - idleEnd.cpuSeconds) * 1000)
    }

    /// Open descriptors of a process: with nothing else growing, one per connected client.
    static func openFiles(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }
}

/// What `clients` waiting clients cost one intake.
package struct WaitBenchResult: Sendable, Codable {
    package var clients: Int
    /// Clients answered `granted` (all of them, or the run failed its promise).
    package var granted: Int
    package var intakeRSSBeforeMB: Double
    package var intakeRSSWaitingMB: Double
    package var bytesPerWaitingClient: Double
    /// The intake's CPU while every client waits and nothing changes.
    package var idleCPUPercent: Double
    /// Redis connections meanwhile: the intake's pool, its one subscription, the bench's own.
    package var redisConnectedClients: Int
    /// From starting the workers to the last client's answer.
    package var answeredSeconds: Double
    package var intakeCPUMsWhileAnswering: Double
}
