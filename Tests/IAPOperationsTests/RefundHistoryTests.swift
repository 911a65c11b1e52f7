import AppleJWS
import ArgumentParser
import AppleSimulator
import Foundation
import IAPStages
import IAPOperations
import PipelineTestSupport
import TestSupport
import Testing

@testable import IAPControlCLI

/// Refunds nobody reported: Apple refunded a purchase and its notification never came; Get Refund
/// History finds it, and `--apply` takes it back once, as a REFUND notification would.
@Suite(.serialized) struct RefundHistoryTests {
    static let account = "705000000000777"

    static func transaction(_ id: String, product: String = "gold.100", type: String = "Consumable") -> JWSTransaction {
        var transaction = JWSTransaction(
            transactionID: id, bundleID: PipelineHarness.bundleID, productID: product,
            purchaseDate: Int64(Date().timeIntervalSince1970 * 1000) - 60_000, type: type, environment: "Sandbox")
        transaction.appTransactionID = account
        return transaction
    }

    static func audit(_ pipeline: PipelineHarness) throws -> RefundHistoryAudit {
        RefundHistoryAudit(
            store: pipeline.store, catalog: PipelineHarness.catalog, clients: pipeline.appClients.map(\.client),
            signedData: SignedDataVerifier(rootCertificates: try pipeline.configuration.rootCertificates()),
            ticketTTL: pipeline.configuration.ticketTTL)
    }

    @Test func aRefundWithNoNotificationIsFoundAndRevokedOnce() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let api = pipeline.simulator.serverAPI
            for (id, product, type) in [
                ("8100000000000001", "gold.100", "Consumable"), ("8100000000000002", "level.pack", "Non-Consumable"),
            ] {
                let signed = try api.register(Self.transaction(id, product: product, type: type))
                #expect(try await pipeline.terminal(try await pipeline.submit(signed: signed)).status == .granted)
            }
            // Refunded at Apple; never sent to the game: 8100000000000003.
            _ = try api.register(Self.transaction("8100000000000003"))
            try api.refund(transactionID: "8100000000000001")
            try api.refund(transactionID: "8100000000000003")
            let audit = try Self.audit(pipeline)

            // The user's purchases are the customers asked; listing changes nothing.
            let asked = try await audit.transactionIDs(ofUser: "player-1")
            #expect(Set(asked) == ["8100000000000001", "8100000000000002"])
            let listed = await audit.audit(transactionIDs: asked, apply: false, logger: testLogger)
            #expect(listed.complete, "\(listed.error ?? "")")
            let states = Dictionary(uniqueKeysWithValues: listed.refunds.map { ($0.transaction.transactionID, $0.books.state) })
            #expect(states == ["8100000000000001": "granted", "8100000000000003": "unknown"])
            #expect(listed.refunds.allSatisfy { $0.action == nil && $0.transaction.revocationDate != nil })
            #expect(try await pipeline.fulfilments().filter { $0["event"] == "revoked" }.isEmpty)

            // --apply: the grant revoked once (source refund_history); the purchase never sent is remembered.
            let applied = await audit.audit(transactionIDs: ["8100000000000002"], apply: true, logger: testLogger)
            #expect(applied.refunds.map(\.action) == ["revoking", "revoking"])
            for refund in applied.refunds {
                let ticket = try await pipeline.terminal(try #require(refund.ticket))
                let expected = refund.transaction.transactionID == "8100000000000001" ? "revoked" : "refund_remembered"
                #expect(ticket.status == .applied && ticket.result == expected, "\(refund.transaction.transactionID): \(ticket)")
            }
            let revoked = try await pipeline.fulfilments().filter { $0["event"] == "revoked" }
            #expect(revoked.count == 1 && revoked.first?["transaction_id"] == "8100000000000001")
            #expect(revoked.first?["source"] == "refund_history" && revoked.first?["user_id"] == "player-1")
            #expect(try await pipeline.store.refundCount(of: "player-1") == 1)

            // Again, and Apple's own REFUND arriving late: nothing more.
            let again = await audit.audit(transactionIDs: ["8100000000000001"], apply: true, logger: testLogger)
            #expect(again.refunds.map(\.action) == ["nothing_to_do", "nothing_to_do"])
            let late = try api.signedNotification(type: "REFUND", transactionID: "8100000000000001")
            #expect(try await pipeline.terminal(try #require(try await pipeline.notify(late).json["ticket"] as? String)).result == "already_revoked")
            #expect(try await pipeline.store.refundCount(of: "player-1") == 1)
            // The refunded purchase sent now is never granted.
            let replay = try await pipeline.terminal(try await pipeline.submit(signed: try api.register(Self.transaction("8100000000000003"))))
            #expect(replay.status != .granted, "\(replay)")
            // Only what is new since the last read: nothing.
            let newOnly = await audit.audit(transactionIDs: ["8100000000000001"], apply: false, fromLastRevision: true, logger: testLogger)
            #expect(newOnly.complete && newOnly.refunds.isEmpty)
        }
    }

    /// `iapctl apple refunds` itself: the flags, and a customer Apple does not know exits 1.
    @Test func theCommandTakesOneCustomerAndFailsWhenAppleKnowsNone() async throws {
        #expect(throws: (any Error).self) { try AppleCommand.Refunds.parse([]) }
        #expect(throws: (any Error).self) { try AppleCommand.Refunds.parse(["--user", "u", "--transaction-id", "1"]) }
        #expect(throws: (any Error).self) { try AppleCommand.Refunds.parse(["--transaction-id", "12ab"]) }
        try await withPipeline(startWorkers: false, serverAPI: true) { pipeline in
            let configuration = pipeline.configuration
            let command = try AppleCommand.Refunds.parse([
                "--redis-url", configuration.redis.url, "--bundle-ids", PipelineHarness.bundleID,
                "--apple-api-key-id", configuration.serverAPI.key!.keyID, "--apple-api-issuer-id", configuration.serverAPI.key!.issuerID,
                "--apple-api-private-key-file", configuration.serverAPI.key!.privateKeyFile,
                "--apple-api-production-url", configuration.serverAPI.productionURL, "--apple-api-sandbox-url", configuration.serverAPI.sandboxURL,
                "--apple-root-certs", configuration.appleRootCertFiles.joined(separator: ","), "--transaction-id", "8199999999999999",
            ])
            await #expect(throws: ExitCode(1)) { try await command.run() }
        }
    }
}
