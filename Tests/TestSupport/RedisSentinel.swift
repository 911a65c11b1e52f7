import Foundation
import LocalServers
import LoopbackPort

#if canImport(Glibc)
import Glibc
#endif

/// A real Redis Sentinel (`redis-server --sentinel`) on a free loopback port, watching one primary.
public final class RedisSentinel: Sendable {
    public let port: Int
    public let directory: URL
    private let children = ChildProcesses()

    private init(port: Int, directory: URL) {
        self.port = port
        self.directory = directory
    }

    /// Starts a sentinel that monitors the primary on `primaryPort` as `master` (quorum 1, down
    /// after 2 s: at 1 s, with a sentinel's pings a second apart, a primary it has just switched to
    /// can be held down before its first ping is answered, and failed over again).
    /// `password`: the sentinel's own (`requirepass`): clients must AUTH with it.
    public static func start(master: String, primaryPort: Int, password: String? = nil) async throws -> RedisSentinel {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("iap-sentinel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var lastError: (any Error)?
        for _ in 0..<5 {
            let sentinel = RedisSentinel(port: try LoopbackPort.free(), directory: directory)
            do {
                try await sentinel.launch(master: master, primaryPort: primaryPort, password: password)
                return sentinel
            } catch {
                lastError = error
            }
        }
        throw lastError ?? TestSupportError("redis-sentinel did not start")
    }

    private func launch(master: String, primaryPort: Int, password: String?) async throws {
        // Sentinel rewrites its configuration file: it must be its own and writable.
        let file = directory.appendingPathComponent("sentinel-\(port).conf")
        try """
            port \(port)
            bind 127.0.0.1
            dir \(directory.path)
            logfile ""
            sentinel monitor \(master) 127.0.0.1 \(primaryPort) 1
            sentinel down-after-milliseconds \(master) 2000
            sentinel failover-timeout \(master) 3000
            \(password.map { "requirepass \($0)" } ?? "")

            """.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = try Executable.find("redis-server")
        process.arguments = [file.path, "--sentinel"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        children.keep(process, as: port)
        // A sentinel never says it accepts connections; it says what it monitors once it listens.
        guard await RedisServerLaunch.awaitReady(output.fileHandleForReading, marker: "+monitor master") else {
            stop()
            throw TestSupportError("redis-sentinel on port \(port) did not become ready")
        }
    }

    public func stop() {
        children.killAll()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit {
        children.terminateRunning()
    }
}
