import Foundation
import LocalServers
import LoopbackPort
import RedisClient

#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` on a free loopback port, started for one test and stopped after it.
public final class RedisServer: Sendable {
    public let port: Int
    public let directory: URL
    private let extraArguments: [String]
    private let children = ChildProcesses()

    /// Whether it speaks TLS only (`start(tls:)`).
    public let secure: Bool
    public var url: String { "\(secure ? "rediss" : "redis")://127.0.0.1:\(port)" }
    public var configuration: RedisConfiguration {
        var configuration = RedisConfiguration(endpoint: .tcp(host: "127.0.0.1", port: port))
        configuration.connectTimeout = Self.connectTimeout
        return configuration
    }

    /// A test client's connect deadline: only a guard against a hang. Beside a CI run on 2 cores,
    /// connects on loopback took over the production default of 2 s (14 tests failed at once).
    public static let connectTimeout: Duration = .seconds(15)

    private init(port: Int, directory: URL, extraArguments: [String], secure: Bool = false) {
        self.port = port
        self.directory = directory
        self.extraArguments = extraArguments
        self.secure = secure
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

    /// Starts a server that speaks TLS only (`tls-port`, its plain port off) with `certificates`;
    /// clients need no certificate of their own. `url` is then its `rediss://` address.
    public static func start(tls certificates: TestCertificates) async throws -> RedisServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("iap-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try LoopbackPort.free()
            let server = RedisServer(port: port, directory: directory, extraArguments: [
                "--port", "0", "--tls-port", String(port), "--tls-cert-file", certificates.certificateFile,
                "--tls-key-file", certificates.keyFile, "--tls-ca-cert-file", certificates.caFile, "--tls-auth-clients", "no",
            ], secure: true)
            do {
                try await server.launch()
                return server
            } catch {
                lastError = error
            }
        }
        throw lastError ?? TestSupportError("redis-server (TLS) did not start")
    }

    /// Stops the server with SIGKILL, as a crash would.
    public func kill() {
        children.kill(port)
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
        children.terminateRunning()
    }

    private func launch() async throws {
        do {
            children.keep(try await RedisServerLaunch(port: port, directory: directory, options: extraArguments).start(), as: port)
        } catch {
            throw TestSupportError("\(error)")
        }
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
