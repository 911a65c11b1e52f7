import AppleSimulator
import Foundation
import IAPClient
import LoopbackPort
import PipelineTestSupport
import Testing

/// examples/python, run by CI: the module against the shared signing vectors, and quickstart.py
/// (docs/quickstart.md's steps) against the whole pipeline over real HTTP: a purchase at
/// apple-sim, submitted signed, long-polled, its webhook verified, refunded, its `revoked` seen.
@Suite(.serialized) struct PythonClientTests {
    static let examples = repositoryRoot.appendingPathComponent("examples/python")

    static var python: String? { executableOnPath("python3") }

    @Test func theModulePassesTheSigningVectors() async throws {
        let python = try #require(Self.python, "python3 is needed (workers/deps installs it)")
        let (status, output) = try await runTool(python, ["-m", "unittest", "-v", "test_vectors"], directory: Self.examples)
        #expect(status == 0, "\(output)")
        #expect(output.contains("OK"), "\(output)")
    }

    @Test func theQuickstartRunsEndToEnd() async throws {
        let python = try #require(Self.python, "python3 is needed (workers/deps installs it)")
        let signer = RequestSigner(keyID: "backend-1", secret: "quickstart-backend-secret-0123456789")
        let webhookSecret = "quickstart-webhook-secret-0123456789"
        let port = try LoopbackPort.free()
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("client-keys-\(UUID().uuidString).json")
        try signer.keysFile.write(to: keys, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: keys) }
        try await withPipeline(environment: [
            "IAP_CLIENT_KEYS_FILE": keys.path, "IAP_WEBHOOK_URL": "http://127.0.0.1:\(port)/hook", "IAP_WEBHOOK_SECRET": webhookSecret,
        ]) { pipeline in
            let (status, output) = try await runTool(python, ["quickstart.py"], environment: [
                "IAP_URL": pipeline.intake.baseURL, "IAP_KEY_ID": signer.keyID, "IAP_SECRET": signer.secret,
                "APPLE_SIM_URL": pipeline.simulatorServer.baseURL, "WEBHOOK_PORT": String(port), "IAP_WEBHOOK_SECRET": webhookSecret,
                "BUNDLE_ID": PipelineHarness.bundleID, "PRODUCT_ID": "gold.100", "USER_ID": "player 42",
            ], directory: Self.examples)
            #expect(status == 0, "\(output)")
            #expect(output.contains("OK: purchased, submitted, granted once, webhook verified, refunded, revoked"), "\(output)")
            // The books agree: one grant to the player, then its revocation.
            let events = try await pipeline.fulfilments().filter { $0["user_id"] == "player 42" }.compactMap { $0["event"] }
            #expect(events == ["granted", "revoked"], "\(events)")
        }
    }
}
