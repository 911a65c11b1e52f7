import AsyncHTTPClient
import Foundation
import IAPIntake
import IAPSettings
import IAPStages
import LoopbackPort
import TestSupport
import Testing

/// An intake without client keys listens on loopback only (unless `IAP_ALLOW_OPEN_INTAKE=on`),
/// and an intake with keys serves `/metrics` on its own listener, never on the callers' port.
@Suite(.serialized) struct IntakeExposureTests {
    @Test func loopbackIsLocalhostAnd127And1Only() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]"] { #expect(LoopbackHost.contains(host), "\(host)") }
        for host in ["0.0.0.0", "::", "10.0.0.5", "128.0.0.1", "127.0.0", "127.0.0.256", "127.0.0.1.example.com", "intake", ""] {
            #expect(!LoopbackHost.contains(host), "\(host)")
        }
    }

    @Test func anOpenIntakeOnAPublicAddressIsRefusedUnlessAllowed() throws {
        func check(_ environment: [String: String]) throws {
            try IntakeExposure.check(try PipelineConfiguration(environment: environment))
        }
        #expect(throws: ConfigurationError.self) { try check(["IAP_HTTP_HOST": "0.0.0.0"]) }
        do {
            try check(["IAP_HTTP_HOST": "10.1.2.3"])
            Issue.record("a public open intake was let through")
        } catch let error as ConfigurationError {
            #expect(error.variable == "IAP_CLIENT_KEYS_FILE" && error.problem.contains("IAP_ALLOW_OPEN_INTAKE"), "\(error)")
        }
        try check([:])
        try check(["IAP_HTTP_HOST": "0.0.0.0", "IAP_ALLOW_OPEN_INTAKE": "on"])
        try check(["IAP_HTTP_HOST": "0.0.0.0", "IAP_CLIENT_KEYS_FILE": "/run/secrets/client-keys.json"])
        #expect(throws: ConfigurationError.self) { try check(["IAP_ALLOW_OPEN_INTAKE": "yes"]) }
    }

    /// The executable itself: exit 2, naming the variable, before it listens.
    @Test func theIntakeExitsNamingTheKeysFileWhenOpenOnAPublicAddress() async throws {
        let (status, errors) = try await Self.run(["IAP_HTTP_HOST": "0.0.0.0", "IAP_HTTP_PORT": String(try LoopbackPort.free())])
        #expect(status == 2)
        #expect(errors.contains("IAP_CLIENT_KEYS_FILE") && errors.contains("IAP_ALLOW_OPEN_INTAKE"), "\(errors)")
    }

    /// With keys, `/metrics` answers on `IAP_METRICS_PORT` and not on the intake's port.
    @Test func withKeysTheMetricsAreOnTheirOwnListenerOnly() async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).json")
        try #"{"backend-1": "0123456789abcdef-backend-secret"}"#.write(to: keys, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keys) }
        let httpPort = try LoopbackPort.free()
        let metricsPort = try LoopbackPort.free()
        let process = try Self.start([
            "IAP_REDIS_URL": redis.url, "IAP_HTTP_PORT": String(httpPort), "IAP_METRICS_PORT": String(metricsPort),
            "IAP_CLIENT_KEYS_FILE": keys.path,
        ])
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let http = HTTPClient.shared
        func status(_ url: String) async -> UInt? {
            guard let response = try? await http.execute(HTTPClientRequest(url: url), timeout: .seconds(5)) else { return nil }
            return UInt(response.status.code)
        }
        // Another process's state, with no event to await: polled.
        try await until("the intake and its metrics listener answer", within: .seconds(60)) {
            let intake = await status("http://127.0.0.1:\(httpPort)/healthz")
            let metrics = await status("http://127.0.0.1:\(metricsPort)/metrics")
            return intake == 200 && metrics == 200
        }
        #expect(await status("http://127.0.0.1:\(httpPort)/metrics") == 404)
    }

    /// One of the package's executables (`iap-intake` unless named), built beside this test binary.
    static func executable(_ name: String) -> URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name)
    }

    /// `onExit`: set before the process runs, so its exit is never missed.
    static func start(
        _ settings: [String: String], errors: Any? = nil, executable name: String = "iap-intake",
        onExit: (@Sendable (Process) -> Void)? = nil
    ) throws -> Process {
        let process = Process()
        process.terminationHandler = onExit
        process.executableURL = executable(name)
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("IAP_") }.merging(settings) { _, new in new }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors ?? FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs an executable to its end (awaited, not waited for on a thread of the test's pool):
    /// its exit status and what it wrote on stderr.
    static func run(_ settings: [String: String], executable name: String = "iap-intake") async throws -> (Int32, String) {
        let errors = Pipe()
        let (exits, exited) = AsyncStream<Void>.makeStream()
        let process = try start(settings, errors: errors, executable: name, onExit: { _ in exited.finish() })
        for await _ in exits {}
        // It has exited: the pipe's writer is closed, so this read ends at once.
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, text)
    }
}
