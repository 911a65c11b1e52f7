import ClusterHarness
import Foundation
import LocalServers
import LoopbackPort
import RedisClient

/// The `redis-client` scenario: our Redis client alone against a fresh redis-server (no
/// persistence), beside redis-benchmark on the same server: commands per second with 64
/// callers sharing one client, the client's CPU per command, and one caller's round-trip time.
package struct RedisClientBench: Sendable {
    package var callers: Int
    package var seconds: Double
    package var benchmarkRequests: Int

    package init(callers: Int = 64, seconds: Double = 3, benchmarkRequests: Int = 200_000) {
        self.callers = callers
        self.seconds = seconds
        self.benchmarkRequests = benchmarkRequests
    }

    package func run(workDirectory: URL) async throws -> RedisClientBenchResult {
        let redis = try await ScratchRedis(folder: workDirectory.appendingPathComponent("redis-client"))
        defer { redis.stop() }
        return try await measure(redis.client, target: "one server", benchmark: ["-h", "127.0.0.1", "-p", String(redis.port)])
    }

    /// The same on a Redis Cluster of `primaries` primaries (no replicas, no persistence): the
    /// callers' keys spread over the shards, redis-benchmark in `--cluster` mode beside it. On 2
    /// cores the shards share the CPU the one server had: this shows the client's routing cost,
    /// not a cluster's room.
    package func runOnCluster(workDirectory: URL, primaries: Int = 3) async throws -> RedisClientBenchResult {
        let ports = try (0..<primaries).map { _ in try LoopbackPort.freeWithCompanion() }
        var processes: [Process] = []
        defer {
            for process in processes where process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        try await RedisClusterLaunch(
            ports: ports, directory: workDirectory.appendingPathComponent("redis-client-cluster"), replicasEach: 0,
            nodeTimeout: .seconds(15)
        ).start { _, process in processes.append(process) }
        let client = try RedisClient(url: "redis-cluster://" + ports.map { "127.0.0.1:\($0)" }.joined(separator: ","))
        defer { Task { await client.close() } }
        return try await measure(
            client, target: "cluster, \(primaries) primaries", benchmark: ["--cluster", "-h", "127.0.0.1", "-p", String(ports[0])])
    }

    private func measure(_ client: RedisClient, target: String, benchmark: [String]) async throws -> RedisClientBenchResult {
        // One caller: the round trip.
        var rtts: [Double] = []
        for index in 0..<5000 {
            let start = ContinuousClock.now
            try await client.send("SET", "rtt", String(index))
            rtts.append((ContinuousClock.now - start) / .microseconds(1))
        }
        rtts.sort()
        // Many callers on one client, each on a key of its own (on a cluster: spread over the shards).
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let cpu = ProcessCPU.seconds()
        let started = ContinuousClock.now
        let done = try await withThrowingTaskGroup(of: Int.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    var count = 0
                    let key = "k\(caller)"
                    while ContinuousClock.now < deadline {
                        try await client.send("SET", key, "value")
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = (ContinuousClock.now - started) / .seconds(1)
        let cpuUsed = ProcessCPU.seconds() - cpu
        // redis-benchmark, the same command, as many clients, no pipelining.
        let childCPU = ProcessCPU.childrenSeconds()
        let tool = Process()
        tool.executableURL = try Executable.find("redis-benchmark")
        tool.arguments = benchmark + ["-c", String(callers), "-n", String(benchmarkRequests), "-t", "set", "--csv"]
        let pipe = Pipe()
        tool.standardOutput = pipe
        tool.standardError = FileHandle.nullDevice
        try tool.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        tool.waitUntilExit()
        let toolCPU = ProcessCPU.childrenSeconds() - childCPU
        let rate = RedisCeiling.rates(csv: output)["SET"]
        guard let rate else { throw BenchError("redis-benchmark printed no SET rate: \(output.prefix(200))") }
        return RedisClientBenchResult(
            target: target, callers: callers, commandsPerSecond: Double(done) / elapsed,
            clientCPUMicrosecondsPerCommand: cpuUsed / Double(done) * 1e6,
            roundTripP50Microseconds: rtts[rtts.count / 2], roundTripP99Microseconds: rtts[rtts.count * 99 / 100],
            redisBenchmarkPerSecond: rate, redisBenchmarkCPUMicrosecondsPerCommand: toolCPU / Double(benchmarkRequests) * 1e6)
    }
}

package struct RedisClientBenchResult: Sendable, Codable {
    /// "one server", or "cluster, N primaries".
    package var target: String
    package var callers: Int
    package var commandsPerSecond: Double
    package var clientCPUMicrosecondsPerCommand: Double
    package var roundTripP50Microseconds: Double
    package var roundTripP99Microseconds: Double
    package var redisBenchmarkPerSecond: Double
    package var redisBenchmarkCPUMicrosecondsPerCommand: Double
}

extension RedisClientBenchResult {
    /// One line for the bench's log.
    package var summary: String {
        String(format: "%.0f commands/s", commandsPerSecond) + " on \(target), "
            + String(
                format: "%.1f µs CPU each (redis-benchmark %.0f/s, %.1f µs)", clientCPUMicrosecondsPerCommand, redisBenchmarkPerSecond,
                redisBenchmarkCPUMicrosecondsPerCommand)
    }
}
