import Foundation
import LoopbackPort
import RedisClient

#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` on a free loopback port, started for one test and stopped after it.
public final class RedisServer: @unchecked Sendable {
    public let port: Int
    public let directory: URL
    private let extraArguments: [String]
    private var process: Process?

    public var url: String { "redis://127.0.0.1:\(port)" }
    public var configuration: RedisConfiguration { .init(endpoint: .tcp(host: "127.0.0.1", port: port)) }

    private init(port: Int, directory: URL, extraArguments: [String]) {
        self.port = port
        self.directory = directory
        self.extraArguments = extraArguments
    }

    /// Starts a server; `arguments` are extra `redis-server` options such as `["--requirepass", "x"]`.
    public static func start(_ arguments: [String] = []) async throws -> RedisServer {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("iap-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var lastError: (any Error)?
        for _ in 0..<5 {
            let server = RedisServer(port: try LoopbackPort.free(), directory: directory, extraArguments: arguments)
            do {
                try await server.launch()
                return server
            } catch {
                lastError = error
            }
        }
        throw lastError ?? TestSupportError("redis-server did not start")
    }

    /// Stops the server with SIGKILL, as a crash would.
    public func kill() {
        guard let process else { return }
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        self.process = nil
    }

    /// Starts again on the same port and data folder.
    public func restart() async throws {
        kill()
        try await launch()
    }

    public func stop() {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit {
        if let process, process.isRunning { process.terminate() }
    }

    private func launch() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--dir", directory.path,
            "--save", "", "--appendonly", "no", "--logfile", "", "--daemonize", "no",
        ] + extraArguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        self.process = process
        let ready = await Self.waitForReady(output.fileHandleForReading)
        if !ready {
            kill()
            throw TestSupportError("redis-server on port \(port) did not become ready")
        }
    }

    /// Reads the server's log until it says it accepts connections, then keeps draining it
    /// on a background thread so a full pipe never stalls the server.
    static func waitForReady(_ handle: FileHandle, marker: String = "Ready to accept connections") async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var buffer = ""
                var answered = false
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    if answered { continue }
                    buffer += String(decoding: data, as: UTF8.self)
                    if buffer.contains(marker) {
                        answered = true
                        continuation.resume(returning: true)
                    } else if buffer.contains("Address already in use") || buffer.contains("# Fatal") {
                        answered = true
                        continuation.resume(returning: false)
                    }
                }
                if !answered { continuation.resume(returning: false) }
            }
        }
    }

    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["REDIS_SERVER"] { return path }
        for candidate in ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return "redis-server"
    }
}

public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs `body` with a fresh server and a client connected to it, and tears both down.
public func withRedis<T>(
    _ arguments: [String] = [],
    poolSize: Int = 4,
    _ body: (RedisClient, RedisServer) async throws -> T
) async throws -> T {
    let server = try await RedisServer.start(arguments)
    let client = RedisClient(configuration: server.configuration, poolSize: poolSize)
    do {
        let result = try await body(client, server)
        await client.close()
        server.stop()
        return result
    } catch {
        await client.close()
        server.stop()
        throw error
    }
}
