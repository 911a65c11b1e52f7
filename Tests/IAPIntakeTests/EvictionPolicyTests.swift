import AsyncHTTPClient
import Foundation
import PipelineCore
import LocalServers
import LoopbackPort
import RedisClient
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Only a Redis that keeps every key: each process reads `maxmemory-policy` at start; an evicting
/// one stops it (exit 2, naming the setting), a hidden one is a warning, and a Redis that answers
/// only later is checked then.
@Suite(.serialized) struct EvictionPolicyTests {
    @Test func thePolicyIsReadFromARealRedis() async throws {
        let cases: [([String], EvictionPolicy)] = [
            ([], .keepsEveryKey),
            (["--maxmemory-policy", "allkeys-lru"], .evicts("allkeys-lru")),
            (["--maxmemory-policy", "volatile-ttl"], .evicts("volatile-ttl")),
        ]
        for (arguments, expected) in cases {
            let read = try await withRedis(arguments) { client, _ in try await EvictionPolicy.read(from: client) }
            #expect(read == expected, "\(arguments)")
        }
        try await withRedis(["--rename-command", "CONFIG", ""]) { client, _ in
            guard case .hidden = try await EvictionPolicy.read(from: client) else {
                Issue.record("a Redis without CONFIG was not reported hidden")
                return
            }
        }
    }

    /// The executables: the intake and a stage worker exit 2 on an evicting Redis, naming it.
    @Test func everyProcessStopsOnARedisThatEvicts() async throws {
        let redis = try await RedisServer.start(["--maxmemory-policy", "allkeys-lru"])
        defer { redis.stop() }
        for executable in ["iap-intake", "iap-granter"] {
            let (status, errors) = try await IntakeExposureTests.run(
                ["IAP_REDIS_URL": redis.url, "IAP_HTTP_PORT": String(try LoopbackPort.free())], executable: executable)
            #expect(status == 2, "\(executable)")
            #expect(errors.contains("maxmemory-policy") && errors.contains("allkeys-lru"), "\(executable): \(errors)")
        }
    }

    /// A Redis that hides `CONFIG` (a managed one): the intake serves, and says it could not check.
    @Test func aHiddenPolicyIsAWarning() async throws {
        let redis = try await RedisServer.start(["--rename-command", "CONFIG", ""])
        defer { redis.stop() }
        let port = try LoopbackPort.free()
        let errors = Pipe()
        let (exits, exited) = AsyncStream<Void>.makeStream()
        let process = try IntakeExposureTests.start(
            ["IAP_REDIS_URL": redis.url, "IAP_HTTP_PORT": String(port)], errors: errors, onExit: { _ in exited.finish() })
        // Another process's state, with no event to await: polled.
        try await until("the intake answers", within: .seconds(60)) {
            guard let response = try? await HTTPClient.shared.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/readyz"), timeout: .seconds(5))
            else { return false }
            return response.status.code == 200
        }
        process.terminate()
        for await _ in exits {}
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text.contains("cannot read Redis's maxmemory-policy"), "\(text)")
    }

    /// Redis down at start, up later with an evicting policy: the intake finds out and stops.
    @Test func aRedisThatAnswersOnlyLaterIsCheckedThen() async throws {
        let port = try LoopbackPort.free()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("late-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Its log in a file: a pipe would stay open in the Redis started after it (children inherit it).
        let log = directory.appendingPathComponent("intake.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let errors = try FileHandle(forWritingTo: log)
        let (exits, exited) = AsyncStream<Void>.makeStream()
        let process = try IntakeExposureTests.start(
            ["IAP_REDIS_URL": "redis://127.0.0.1:\(port)", "IAP_HTTP_PORT": String(try LoopbackPort.free())], errors: errors,
            onExit: { _ in exited.yield() })
        let server = try await RedisServerLaunch(port: port, directory: directory, options: ["--maxmemory-policy", "allkeys-random"]).start()
        defer {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        // The intake's exit is the event awaited.
        for await _ in exits { break }
        try errors.close()
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(process.terminationStatus == 2)
        // It was up before Redis was: only the check made once Redis answered can have stopped it.
        #expect(text.contains("allkeys-random"), "\(text)")
    }
}
