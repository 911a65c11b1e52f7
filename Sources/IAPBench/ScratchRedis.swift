import ClusterHarness
import Foundation
import LocalServers
import LoopbackPort
import RedisClient

/// A redis-server of a scenario's own (no persistence) on a free loopback port, and a client of it.
struct ScratchRedis {
    let port: Int
    let client: RedisClient
    private let server: Process

    /// Starts it in `folder` and returns once it accepts connections.
    init(folder: URL) async throws {
        port = try LoopbackPort.free()
        server = try await RedisServerLaunch(port: port, directory: folder).start()
        client = RedisClient(configuration: RedisConfiguration(endpoint: .tcp(host: "127.0.0.1", port: port)))
    }

    /// SIGKILL: nothing to save, and a child of the bench starts with SIGTERM blocked.
    func stop() {
        ChildKill.kill(server)
        let client = client
        Task { await client.close() }
    }
}
