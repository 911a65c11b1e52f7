import AppleJWS
import AppleSimulator
import Foundation
import PipelineCore
import PipelineTestSupport
import Testing

/// Finish Transaction: a consumable granted is finished at Apple once, by an errand the grant
/// queues in its own step (retried like any Apple call); a non-consumable is not; a transaction
/// Apple does not know ends the errand as an answer; `IAP_FINISH_TRANSACTIONS=off` queues none.
@Suite(.serialized) struct FinishTransactionTests {
    @Test func aGrantedConsumableIsFinishedAtAppleOnceAndANonConsumableIsNot() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let api = pipeline.simulator.serverAPI
            // Apple fails the first call: the errand is retried, then finished.
            api.setFaults(SimulatedAPIFaults(serverErrors: 1))
            let gold = try api.register(SignedFixture.transaction("2000000000000051"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: gold, user: "alice")).status == .granted)
            let errand = try await pipeline.terminal("finish-2000000000000051")
            #expect(errand.status == .applied && errand.result == "transaction_finished", "\(errand)")
            #expect(api.timesFinished(transactionID: "2000000000000051") == 1)
            #expect(api.callCounts()["Production finish_transaction"] == 2)

            // The same purchase replayed by another user (its token is alice's): not granted, nothing finished twice.
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: gold, user: "mallory")).status != .granted)
            // A non-consumable: Apple keeps it for restores, nothing to finish.
            let pack = try api.register(SignedFixture.transaction("2000000000000052", product: "level.pack"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: pack, user: "alice")).status == .granted)
            #expect(try await pipeline.readTicket("finish-2000000000000052") == nil)
            #expect(api.timesFinished(transactionID: "2000000000000051") == 1)
            #expect(api.callCounts()["Production finish_transaction"] == 2)
        }
    }

    @Test func anUnknownTransactionIsAnAnswerAndOffFinishesNothing() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            // Signed by our authority but never registered with apple-sim's Server API.
            let unknown = try pipeline.authority.signer.sign(payload: SignedFixture.transaction("2000000000000053"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: unknown, user: "carol")).status == .granted)
            let errand = try await pipeline.terminal("finish-2000000000000053")
            #expect(errand.status == .applied && errand.result == "transaction_not_found", "\(errand)")
        }
        try await withPipeline(serverAPI: true, environment: ["IAP_FINISH_TRANSACTIONS": "off"]) { pipeline in
            let api = pipeline.simulator.serverAPI
            let gold = try api.register(SignedFixture.transaction("2000000000000054"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: gold, user: "dave")).status == .granted)
            #expect(try await pipeline.readTicket("finish-2000000000000054") == nil)
            #expect(api.callCounts()["Production finish_transaction"] == nil)
        }
    }
}
