import AppleJWS
import AppleSimulator
import Foundation
import IAPStages
import IAPOperations
import PipelineTestSupport
import TestSupport
import Testing

/// `IAP_REFUND_SWEEP_S`: one notifier asks Get Refund History about every customer with a recent
/// grant, and a refund nobody reported is taken back once, with no operator.
@Suite(.serialized) struct RefundSweepTests {
    @Test func theSweepFindsARefundNobodyReportedAndTakesItBackOnce() async throws {
        try await withPipeline(serverAPI: true, environment: ["IAP_APPLE_API_MAX_RPS": "1000"]) { pipeline in
            let api = pipeline.simulator.serverAPI
            let mine = try api.register(RefundHistoryTests.transaction("8200000000000001"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: mine, user: "player-1")).status == .granted)
            var theirs = RefundHistoryTests.transaction("8200000000000002", product: "level.pack", type: "Non-Consumable")
            theirs.appTransactionID = "705000000000888"
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: try api.register(theirs), user: "player-2")).status == .granted)
            try api.refund(transactionID: "8200000000000001")

            let sweeper = RefundSweeper(
                audit: try RefundHistoryTests.audit(pipeline), store: pipeline.store, period: .seconds(3600), asksPerSecond: 1000,
                settle: .zero, logger: testLogger)
            guard case .swept(let first) = await sweeper.turn() else { Issue.record("the first look did not sweep"); return }
            #expect(first.complete && first.asked == 2 && first.revoked == 1, "\(first)")
            let ticket = try #require(try await pipeline.store.notificationTicket(
                uuid: RefundHistoryAudit.notificationUUID(transactionID: "8200000000000001"), originalTransactionID: "8200000000000001"))
            #expect(try await pipeline.terminal(ticket).result == "revoked")
            let revoked = try await pipeline.fulfilments().filter { $0["event"] == "revoked" }
            #expect(revoked.count == 1 && revoked.first?["source"] == "refund_history" && revoked.first?["user_id"] == "player-1")
            // Not due again before its period; when due, nothing new is taken back.
            #expect(await sweeper.turn() == .waited)
            let keys = pipeline.configuration.keys
            _ = try await pipeline.redis.send("HDEL", keys.refundSweep, "next_at")
            guard case .swept(let second) = await sweeper.turn() else { Issue.record("the second look did not sweep"); return }
            #expect(second.complete && second.asked == 2 && second.revoked == 0, "\(second)")
            #expect(try await pipeline.store.refundCount(of: "player-1") == 1)
            // A customer whose latest purchase is older than 90 days is no longer asked.
            let old = Int64(Date().timeIntervalSince1970 * 1000) - 91 * 86_400_000
            _ = try await pipeline.redis.send("HSET", keys.refundCustomers, "player-9", "\(old):8200000000000009")
            _ = try await pipeline.redis.send("HDEL", keys.refundSweep, "next_at")
            guard case .swept(let third) = await sweeper.turn() else { Issue.record("the third look did not sweep"); return }
            #expect(third.dropped == 1 && third.asked == 2, "\(third)")
            #expect(try await pipeline.redis.send("HEXISTS", keys.refundCustomers, "player-9").int == 0)
            let state = try await pipeline.redis.send("HGETALL", keys.refundSweep).stringDictionary
            #expect(state["last_seen"] == "2" && state["cursor:b0"] != nil, "\(state)")
        }
    }
}
