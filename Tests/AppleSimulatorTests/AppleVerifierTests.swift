import AppleReceipt
import AppleSimulator
import Hummingbird
import LoopbackPort
import PipelineTestSupport
import Testing
import TestSupport

/// The real HTTP client against apple-sim on loopback.
@Suite struct AppleVerifierTests {
    static func receipt(
        environment: String = "Production", status: Int? = nil, failures: Int? = nil, http: Int? = nil, retryAfter: Int? = nil
    ) -> String {
        SimulatedReceipt(
            bundleID: "com.example.game", environment: environment,
            transactions: [.init(transactionID: "1000", productID: "gold")], status: status,
            transientFailures: failures, failureHTTPStatus: http, retryAfterSeconds: retryAfter
        ).receiptData()
    }

    static func withVerifier(
        secret: String? = nil, simulatorSecret: String? = nil, productionPath: String = AppleSimulator.productionPath,
        _ body: (AppleVerifier, AppleSimulator) async throws -> Void
    ) async throws {
        let simulator = try AppleSimulator(settings: .init(port: 0, sharedSecret: simulatorSecret))
        let server = try await RunningServer.start { simulator.makeApplication(logger: testLogger, onServerRunning: $0) }
        // A minute: apple-sim answers at once, and a machine stalled for seconds (a whole suite
        // starting on 2 cores) must not turn its answers into timeouts.
        let verifier = AppleVerifier(configuration: .init(
            productionURL: server.baseURL + productionPath, sandboxURL: server.baseURL + AppleSimulator.sandboxPath,
            sharedSecret: secret, timeout: .seconds(60), maxConnections: 8))
        do {
            try await body(verifier, simulator)
        } catch {
            await verifier.shutdown()
            await server.stop()
            throw error
        }
        await verifier.shutdown()
        await server.stop()
    }

    @Test func anAppleOutageIsTransientUntilItEnds() async throws {
        try await Self.withVerifier { verifier, simulator in
            simulator.startOutage(SimulatedOutage(mode: .unavailable, durationMs: 600_000))
            guard case .transient = await verifier.verify(receiptData: Self.receipt(), attempt: 1) else {
                Issue.record("an outage must be transient")
                return
            }
            simulator.startOutage(SimulatedOutage(mode: .off, durationMs: 0))
            guard case .valid = await verifier.verify(receiptData: Self.receipt(), attempt: 2) else {
                Issue.record("the outage is over")
                return
            }
        }
    }

    @Test func validProductionReceipt() async throws {
        try await Self.withVerifier { verifier, simulator in
            let outcome = await verifier.verify(receiptData: Self.receipt(), attempt: 1)
            guard case .valid(let receipt) = outcome else { Issue.record("got \(outcome)"); return }
            #expect(receipt.environment == "Production" && receipt.bundleID == "com.example.game")
            #expect(receipt.transactions.map(\.transactionID) == ["1000"])
            #expect(simulator.requestCount == 1)
        }
    }

    @Test func sandboxReceiptIsResentToSandboxWithinOneAttempt() async throws {
        try await Self.withVerifier { verifier, simulator in
            let outcome = await verifier.verify(receiptData: Self.receipt(environment: "Sandbox"), attempt: 1)
            guard case .valid(let receipt) = outcome else { Issue.record("got \(outcome)"); return }
            #expect(receipt.environment == "Sandbox")
            #expect(simulator.requestCount == 2)
        }
    }

    @Test func wrongSharedSecretIsOurMisconfiguration() async throws {
        try await Self.withVerifier(secret: "wrong", simulatorSecret: "right") { verifier, _ in
            let outcome = await verifier.verify(receiptData: Self.receipt(), attempt: 1)
            guard case .misconfigured(let reason, _) = outcome else { Issue.record("got \(outcome)"); return }
            #expect(reason == "apple_status_21004")
        }
        try await Self.withVerifier(secret: "right", simulatorSecret: "right") { verifier, _ in
            guard case .valid = await verifier.verify(receiptData: Self.receipt(), attempt: 1) else {
                Issue.record("the right secret must verify"); return
            }
        }
    }

    @Test func rejectionsCarryApplesStatus() async throws {
        try await Self.withVerifier { verifier, _ in
            #expect(await verifier.verify(receiptData: Self.receipt(status: 21003), attempt: 1) == .rejected(reason: "apple_status_21003"))
            #expect(await verifier.verify(receiptData: "bm90IGpzb24=", attempt: 3) == .rejected(reason: "apple_status_21002"))
            guard case .transient(let reason, _, _) = await verifier.verify(receiptData: "bm90IGpzb24=", attempt: 1) else {
                Issue.record("a first 21002 is retried"); return
            }
            #expect(reason == "apple_status_21002")
        }
    }

    @Test func transientFailuresAndRetryAfter() async throws {
        try await Self.withVerifier { verifier, _ in
            let busy = Self.receipt(failures: 1)
            guard case .transient(let reason, _, _) = await verifier.verify(receiptData: busy, attempt: 1) else {
                Issue.record("21005 is transient"); return
            }
            #expect(reason == "apple_status_21005")
            guard case .valid = await verifier.verify(receiptData: busy, attempt: 2) else { Issue.record("then valid"); return }
            let limited = Self.receipt(failures: 1, http: 429, retryAfter: 7)
            guard case .transient(let httpReason, _, let retryAfterMs) = await verifier.verify(receiptData: limited, attempt: 1) else {
                Issue.record("429 is transient"); return
            }
            #expect(httpReason == "apple_http_429" && retryAfterMs == 7000)
        }
    }

    @Test func aWrongURLIsMisconfiguredAndAnUnreachableOneTransient() async throws {
        try await Self.withVerifier(productionPath: "/nowhere") { verifier, _ in
            guard case .misconfigured(let reason, _) = await verifier.verify(receiptData: Self.receipt(), attempt: 1) else {
                Issue.record("404 is ours to fix"); return
            }
            #expect(reason == "apple_http_404")
        }
        let port = try LoopbackPort.free()
        let verifier = AppleVerifier(configuration: .init(
            productionURL: "http://127.0.0.1:\(port)/verifyReceipt", sandboxURL: "http://127.0.0.1:\(port)/sandbox", timeout: .seconds(2), maxConnections: 8))
        guard case .transient(let reason, _, _) = await verifier.verify(receiptData: Self.receipt(), attempt: 1) else {
            Issue.record("unreachable is transient"); return
        }
        #expect(reason == "apple_unreachable")
        await verifier.shutdown()
    }

    @Test func aBodyThatIsNotAnAnswerIsTransient() async throws {
        let server = try await RunningServer.start { onRunning in
            let router = Router()
            router.post("/verifyReceipt") { _, _ in "<html>maintenance</html>" }
            return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), onServerRunning: { await onRunning($0.localAddress?.port ?? 0) }, logger: testLogger)
        }
        let verifier = AppleVerifier(configuration: .init(productionURL: server.baseURL + "/verifyReceipt", sandboxURL: server.baseURL + "/verifyReceipt", timeout: .seconds(60), maxConnections: 8))
        guard case .transient(let reason, _, _) = await verifier.verify(receiptData: Self.receipt(), attempt: 1) else {
            Issue.record("a non-JSON body is transient"); return
        }
        #expect(reason == "apple_bad_response")
        await verifier.shutdown()
        await server.stop()
    }
}
