import AppleSimulator
import ArgumentParser
@preconcurrency import Crypto
import Foundation
import Hummingbird

public struct AppleSimCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "apple-sim",
        abstract: "Plays Apple: verifyReceipt (/verifyReceipt, /sandbox/verifyReceipt) and the App Store Server API (/inApps, /sandbox/inApps).")
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port = 9090
    @Option(help: "Latency added to every answer (ms).") var latencyMs = 0
    @Option(help: "Share of requests answered HTTP 503 at random (0...1).") var errorRate = 0.0
    @Option(help: "When set, other passwords get status 21004 (or APPLE_SIM_SHARED_SECRET).") var sharedSecret: String?
    @Option(help: "Write the root certificate of apple-sim's signing authority here (PEM), for IAP_APPLE_ROOT_CERTS.")
    var rootCertOut: String?
    @Option(help: "The App Store Server API key (.p8 PEM) whose tokens the simulated API accepts (it reads only the public part).")
    var apiKeyFile: String?
    public init() {}

    public func validate() throws {
        guard (0...1).contains(errorRate) else { throw ValidationError("--error-rate must be within 0...1") }
        guard latencyMs >= 0 else { throw ValidationError("--latency-ms must not be negative") }
    }

    public func run() async throws {
        let logger = bootstrapLogging(label: "apple-sim")
        let secret = sharedSecret ?? ProcessInfo.processInfo.environment["APPLE_SIM_SHARED_SECRET"]
        var apiPublicKeyPEM: String?
        if let apiKeyFile {
            guard let pem = FileManager.default.contents(atPath: apiKeyFile).map({ String(decoding: $0, as: UTF8.self) }),
                  let key = try? P256.Signing.PrivateKey(pemRepresentation: pem)
            else { throw ValidationError("--api-key-file: \(apiKeyFile) is not a readable P-256 key in PEM") }
            apiPublicKeyPEM = key.publicKey.pemRepresentation
        }
        let simulator = try AppleSimulator(settings: .init(
            host: host, port: port, latencyMs: latencyMs, errorRate: errorRate, sharedSecret: secret,
            apiPublicKeyPEM: apiPublicKeyPEM))
        if let rootCertOut {
            try simulator.authority.rootPEM.write(toFile: rootCertOut, atomically: true, encoding: .utf8)
        }
        let app = simulator.makeApplication(logger: logger) { port in
            logger.info("apple-sim listening", metadata: ["port": "\(port)"])
        }
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }
}
