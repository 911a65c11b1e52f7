import Foundation
import IAPOperations
import IAPStages
import PipelineCore
import PlainJSON
import RedisClient
import TestSupport
import Testing

/// `record_retention_answer` on its own, on a cluster node that refuses undeclared keys: an answer
/// is recorded once per request (the event, its figure, the subscription's latest answer), and the
/// same request again records nothing.
@Suite struct RetentionAnswerTests {
    static let keys = RedisKeys(prefix: "{t}iap")

    static func record(
        _ store: PipelineStore, request: String, rule: String, original: String = "7500000000000001", now: Int64 = 1_800_000_000_000
    ) async throws -> Bool {
        var event: JSONObject = [
            "event": .string("retention_offered"), "retention_rule": .string(rule), "original_transaction_id": .string(original),
            "product_id": .string("vip.monthly"), "environment": .string("Production"),
        ]
        if rule != "none" { event["retention_message"] = .string("0f6bd64c-3b1e-4d4e-9d3f-5a1e2b7c9d01") }
        return try await store.run(RecordRetentionAnswer(
            keys, originalTransactionID: original, requestID: request, user: rule == "none" ? "" : "p1", event: event,
            offer: rule == "none" ? "" : "comeback", now: now, kept: .seconds(60)))
    }

    @Test func anAnswerIsRecordedOncePerRequest() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let subscription = Self.keys.subscription(originalTransactionID: "7500000000000001")
            _ = try await redis.send("HSET", subscription, "user_id", "p1", "status", "active")
            #expect(try await Self.record(store, request: "r1", rule: "loyal"))
            #expect(try await !Self.record(store, request: "r1", rule: "loyal"))
            #expect(try await Self.record(store, request: "r2", rule: "none"))
            let entries = try await store.fulfilmentEntries().map(\.fields)
            #expect(entries.map { "\($0["event"]!) \($0["user_id"]!) \($0["retention_rule"]!)" } == [
                "retention_offered p1 loyal", "retention_offered  none",
            ])
            let record = try await redis.send("HGETALL", subscription).stringDictionary
            #expect(record["retention_rule"] == "loyal" && record["retention_offer"] == "comeback")
            #expect(record["retention_offered_at"] == "1800000000000")
            let figures = try await redis.send("HGETALL", Self.keys.figures(day: FigureDay(milliseconds: 1_800_000_000_000)))
                .stringDictionary
            #expect(figures == ["retention_offered:loyal|Production|||vip.monthly": "1", "retention_offered:none|Production|||vip.monthly": "1"])
            // The request is kept for the time given, then forgotten.
            let ttl = try await redis.send("PTTL", Self.keys.retentionRequest(originalTransactionID: "7500000000000001", requestID: "r1"))
            #expect((1...60_000).contains(ttl.int ?? 0))
            // No subscription record: nothing is made up for it.
            #expect(try await Self.record(store, request: "r3", rule: "loyal", original: "7500000000000002"))
            #expect(try await redis.send("EXISTS", Self.keys.subscription(originalTransactionID: "7500000000000002")).int == 0)
        }
    }
}
