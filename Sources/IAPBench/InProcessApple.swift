import AppleSimulator
@preconcurrency import Crypto
import Foundation
import Hummingbird
import IAPStages
import Logging
import ServiceLifecycle

/// apple-sim in this process, serving real HTTP on loopback, and the pipeline's configuration to
/// reach it (its root trusted, a Server API key of our own) over a scratch Redis: what the
/// benches that measure Apple's side of a step start with.
struct InProcessApple {
    let simulator: AppleSimulator
    let configuration: PipelineConfiguration
    let scratch: ScratchRedis
    let logger: Logger
    private let group: ServiceGroup
    private let server: Task<Void, any Error>

    static let bundleID = "com.example.game"

    /// In a fresh folder `name` of `workDirectory`, with its scratch Redis; `stop()` ends both.
    static func start(in workDirectory: URL, name: String) async throws -> InProcessApple {
        let folder = workDirectory.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let scratch = try await ScratchRedis(folder: folder)
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        do {
            return try await start(folder: folder, scratch: scratch, logger: logger)
        } catch {
            scratch.stop()
            throw error
        }
    }

    private static func start(folder: URL, scratch: ScratchRedis, logger: Logger) async throws -> InProcessApple {
        let redisPort = scratch.port
        let simulator = try AppleSimulator(settings: .init(port: 0))
        let (ports, port) = AsyncStream<Int>.makeStream()
        let app = simulator.makeApplication(logger: logger) { port.yield($0) }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let server = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let simulatorPort = await iterator.next() else {
            await group.triggerGracefulShutdown()
            throw BenchError("apple-sim did not start")
        }
        let base = "http://127.0.0.1:\(simulatorPort)"
        let rootFile = folder.appendingPathComponent("root.pem").path
        try simulator.authority.rootPEM.write(toFile: rootFile, atomically: true, encoding: .utf8)
        let keyFile = folder.appendingPathComponent("AuthKey_BENCH.p8").path
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let configuration = try PipelineConfiguration(environment: [
            "IAP_REDIS_URL": "redis://127.0.0.1:\(redisPort)", "IAP_APPLE_ROOT_CERTS": rootFile, "IAP_BUNDLE_IDS": bundleID,
            "IAP_APPLE_API_PRODUCTION_URL": base, "IAP_APPLE_API_SANDBOX_URL": base + SimulatedServerAPI.sandboxPrefix,
            "IAP_APPLE_API_KEY_ID": "BENCHKEY01", "IAP_APPLE_API_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
            "IAP_APPLE_API_PRIVATE_KEY_FILE": keyFile, "IAP_APPLE_API_MAX_RPS": "10000",
        ])
        return InProcessApple(
            simulator: simulator, configuration: configuration, scratch: scratch, logger: logger, group: group, server: server)
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await server.result
        scratch.stop()
    }
}
