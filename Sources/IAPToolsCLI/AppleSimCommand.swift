import IAPCLI
import AppleSimulator
import ArgumentParser
@preconcurrency import Crypto
import Foundation
import AsyncHTTPClient
import Hummingbird
import NIOCore
import NIOFoundationCompat

package struct AppleSimCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "apple-sim",
        abstract: "Plays Apple: verifyReceipt, the App Store Server API and Server Notifications, for local runs and tests.",
        subcommands: [AppleSimServeCommand.self, AppleSimNotifyCommand.self], defaultSubcommand: AppleSimServeCommand.self)
    package init() {}
}

/// `apple-sim [serve]`: the simulator itself.
struct AppleSimServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serves verifyReceipt (/verifyReceipt, /sandbox/verifyReceipt) and the App Store Server API (/inApps, /sandbox/inApps).")
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port = 9090
    @Option(help: "Latency added to every answer (ms).") var latencyMs = 0
    @Option(help: "Share of requests answered HTTP 503 at random (0...1).") var errorRate = 0.0
    @Option(help: "When set, other passwords get status 21004 (or APPLE_SIM_SHARED_SECRET).") var sharedSecret: String?
    @Option(help: "Write the root certificate of apple-sim's signing authority here (PEM), for IAP_APPLE_ROOT_CERTS.")
    var rootCertOut: String?
    @Option(help: "The App Store Server API key (.p8 PEM) whose tokens the simulated API accepts (it reads only the public part).")
    var apiKeyFile: String?
    @Option(help: "Make a new App Store Server API key, write it here (.p8 PEM) for IAP_APPLE_API_PRIVATE_KEY_FILE, and accept its tokens.")
    var apiKeyOut: String?
    init() {}

    func validate() throws {
        guard apiKeyFile == nil || apiKeyOut == nil else { throw ValidationError("--api-key-file or --api-key-out, not both") }
        guard (0...1).contains(errorRate) else { throw ValidationError("--error-rate must be within 0...1") }
        guard latencyMs >= 0 else { throw ValidationError("--latency-ms must not be negative") }
    }

    func run() async throws {
        let logger = bootstrapLogging(label: "apple-sim")
        let secret = sharedSecret ?? ProcessInfo.processInfo.environment["APPLE_SIM_SHARED_SECRET"]
        var apiPublicKeyPEM: String?
        if let apiKeyOut {
            let key = P256.Signing.PrivateKey()
            try key.pemRepresentation.write(toFile: apiKeyOut, atomically: true, encoding: .utf8)
            apiPublicKeyPEM = key.publicKey.pemRepresentation
        } else if let apiKeyFile {
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

/// `apple-sim notify`: has a running apple-sim sign a Server Notification V2 about a transaction
/// it knows and deliver it to the pipeline, as Apple would (the same UUID each time).
struct AppleSimNotifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify", abstract: "Sign and deliver a Server Notification V2 through a running apple-sim.")
    @Option(help: "The running apple-sim.") var sim = "http://127.0.0.1:9090"
    @Option(help: "Where to deliver it (the intake's /v1/notifications/apple).") var url: String
    @Option(help: "notificationType: REFUND, REVOKE, REFUND_REVERSED, ONE_TIME_CHARGE, DID_RENEW, TEST, …") var type: String
    @Option(help: "subtype, if any.") var subtype: String?
    @Option(help: "The transaction it is about (registered with apple-sim).") var transactionId: String?
    @Option(help: "Deliver the same notification this many times.") var `repeat` = 1
    init() {}

    func validate() throws {
        guard (1...100).contains(`repeat`) else { throw ValidationError("--repeat must be within 1...100") }
    }

    func run() async throws {
        var order: [String: Any] = ["url": url, "type": type, "repeat": `repeat`]
        if let subtype { order["subtype"] = subtype }
        if let transactionId { order["transaction_id"] = transactionId }
        var request = HTTPClientRequest(url: sim + "/control/notifications")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: order)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        print(String(buffer: body))
        guard response.status == .ok else { throw ExitCode(1) }
    }
}
