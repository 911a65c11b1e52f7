import ClusterHarness
import Foundation
import LoopbackPort
import RedisClient

/// A redis-server of a scenario's own (no persistence) on a free loopback port, and a client of it.
struct ScratchRedis {
    let port: Int
    let client: RedisClient
    private let server: Process

    /// Starts it in `folder` and waits until it answers.
    init(folder: URL) async throws {
        port = try LoopbackPort.free()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        server = Process()
        server.executableURL = try LocalCluster.tool("redis-server")
        server.arguments = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", folder.path]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        var configuration = RedisConfiguration(endpoint: .tcp(host: "127.0.0.1", port: port))
        configuration.reconnectBackoff = .milliseconds(20) ... .milliseconds(100)
        client = RedisClient(configuration: configuration)
        for attempt in 0... {
            if (try? await client.send("PING")) != nil { break }
            if attempt > 100 {
                stop()
                throw BenchError("redis-server on :\(port) did not answer")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// SIGKILL: nothing to save, and a child of the bench starts with SIGTERM blocked.
    func stop() {
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        let client = client
        Task { await client.close() }
    }
}
