import AppleSimulator
import ArgumentParser
import Foundation
import Hummingbird

public struct AppleSimCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "apple-sim",
        abstract: "Plays Apple's verifyReceipt: production at /verifyReceipt, sandbox at /sandbox/verifyReceipt.")
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port = 9090
    @Option(help: "Latency added to every answer (ms).") var latencyMs = 0
    @Option(help: "Share of requests answered HTTP 503 at random (0...1).") var errorRate = 0.0
    @Option(help: "When set, other passwords get status 21004 (or APPLE_SIM_SHARED_SECRET).") var sharedSecret: String?
    public init() {}

    public func validate() throws {
        guard (0...1).contains(errorRate) else { throw ValidationError("--error-rate must be within 0...1") }
        guard latencyMs >= 0 else { throw ValidationError("--latency-ms must not be negative") }
    }

    public func run() async throws {
        let logger = bootstrapLogging(label: "apple-sim")
        let secret = sharedSecret ?? ProcessInfo.processInfo.environment["APPLE_SIM_SHARED_SECRET"]
        let simulator = AppleSimulator(settings: .init(
            host: host, port: port, latencyMs: latencyMs, errorRate: errorRate, sharedSecret: secret))
        let app = simulator.makeApplication(logger: logger) { port in
            logger.info("apple-sim listening", metadata: ["port": "\(port)"])
        }
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }
}
