import AppleJWS
import AppleSimulator
import Foundation
import IAPSettings
import PipelineCore
import IAPStages
import IAPOperations
import RedisClient
import PipelineTestSupport
import TestSupport
import Testing

/// The whole pipeline on a keyspace of four buckets (one Redis server holds them all): tickets
/// name their bucket, purchases live in theirs, and a process's workers serve every bucket.
@Suite(.serialized) struct BucketsEndToEndTests {
    static let buckets = ["IAP_BUCKETS": "4"]

    @Test func receiptsInEveryBucketAreGrantedOnceAndWaitersAreWokenFromTheirBucket() async throws {
        try await withPipeline(environment: Self.buckets) { pipeline in
            let layout = pipeline.configuration.redis.layout
            #expect(layout.count == 4)
            var tickets: [String] = []
            for n in 0..<8 {
                let ticket = try await pipeline.submit(receipt([gold("70\(n)0"), gold("70\(n)1")]), user: "player-\(n)")
                // The id names its bucket: the one of the submission's digest.
                let named = try #require(Int(ticket.prefix { $0 != "." }))
                #expect((0..<4).contains(named) && ticket.count == "\(named).".count + 22)
                tickets.append(ticket)
            }
            #expect(Set(tickets.map { layout.bucket(ofTicket: $0) }).count > 1, "eight submissions in one bucket: \(tickets)")
            // A client waiting on each ticket is woken by its bucket's channel.
            for ticket in tickets {
                let waited = try await pipeline.get("/v1/receipts/\(ticket)?wait=20")
                #expect(waited.status == 200 && waited.json["status"] as? String == "granted", "\(waited.json)")
            }
            // Each grant record lives in its purchase's bucket; nothing in the job's bucket by mistake.
            for n in 0..<8 {
                for unit in ["70\(n)0", "70\(n)1"] {
                    let key = pipeline.configuration.keys.grant(unit: unit, originalTransactionID: unit)
                    #expect(key.contains("{\(layout.tags[layout.bucket(ofOriginalTransactionID: unit)])}"))
                    #expect(try await pipeline.redis.send("HGET", key, "user_id").string == "player-\(n)")
                }
            }
            #expect(try await pipeline.fulfilments().count == 16)
            // A receipt whose purchases lie in buckets besides its ticket's was split into parts,
            // each with its own ticket in its bucket; the client's ticket lists every purchase.
            var split = 0
            for ticket in tickets {
                let parts = try await pipeline.redis.send("HGET", pipeline.configuration.keys.ticket(ticket), "parts").string
                let final = try #require(try await pipeline.readTicket(ticket))
                #expect(final.transactions.count == 2 && final.transactions.allSatisfy { $0.outcome == .granted })
                guard let parts else { continue }
                split += 1
                for part in try #require(try JSONSerialization.jsonObject(with: Data(parts.utf8)) as? [String]) {
                    #expect(part.hasSuffix(".\(ticket)"))
                    #expect(try await pipeline.redis.send("HGET", pipeline.configuration.keys.ticket(part), "status").string == "granted")
                }
            }
            #expect(split > 0, "no receipt was split: \(tickets)")
            // The same receipt again: the same ticket, nothing queued; another user: duplicates.
            let again = try await pipeline.post(["receipt_data": receipt([gold("7000"), gold("7001")]).receiptData(), "user_id": "player-0"])
            #expect(again.status == 200 && again.json["ticket"] as? String == tickets[0])
            let thiefTicket = try await pipeline.submit(receipt([gold("7000")]), user: "thief")
            let other = try await pipeline.terminal(thiefTicket)
            #expect(other.status == .duplicate)
            let stats = try await pipeline.store.stats(lease: .seconds(30))
            #expect(stats.queues.values.allSatisfy { $0 == 0 } && stats.inflight.values.allSatisfy { $0 == 0 })
            // One process per stage serves the four buckets: one live worker each, not four.
            #expect(stats.liveWorkers["grant"] == 1)
            #expect(try await pipeline.fulfilments().count == 16)
        }
    }

    @Test func aNotificationIsAppliedInItsPurchasesBucket() async throws {
        try await withPipeline(environment: Self.buckets) { pipeline in
            let api = pipeline.simulator.serverAPI
            let id = "4100000000000001"
            let jws = try api.register(SignedFixture.consumable(id))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws)).status == .granted)
            let refund = try api.signedNotification(type: "REFUND", transactionID: id)
            var ticket: String?
            for _ in 0..<2 {
                let reply = try await pipeline.notify(refund)
                #expect(reply.status == 200)
                ticket = try #require(reply.json["ticket"] as? String)
            }
            let bucket = pipeline.configuration.redis.layout.bucket(ofOriginalTransactionID: id)
            #expect(ticket?.hasPrefix("\(bucket).") == true)
            let applied = try await pipeline.terminal(try #require(ticket))
            #expect(applied.status == .applied && applied.result == "revoked")
            #expect(try await pipeline.fulfilments().map { $0["event"] ?? "?" } == ["granted", "revoked"])
            let record = pipeline.configuration.keys.grant(unit: id, originalTransactionID: id)
            #expect(try await pipeline.redis.send("HEXISTS", record, "revoked_at").int == 1)
        }
    }

    /// A job in one bucket's queue whose ticket lies in another is none of ours: dead-lettered
    /// untouched (its steps would reach into another slot), and the bucket goes on.
    @Test func aJobWhoseTicketLiesInAnotherBucketIsDeadLetteredUntouched() async throws {
        try await withPipeline(environment: Self.buckets) { pipeline in
            let keys = pipeline.configuration.keys
            let foreign = pipeline.configuration.redis.layout.ticketID("AAAAAAAAAAAAAAAAAAAAAA", inBucket: 1)
            let job = Job(ticket: foreign, userID: "u", receiptData: "eA==", productID: nil, transactionID: nil, enqueuedAt: 1)
            try await pipeline.redis.send("LPUSH", keys.inBucket(0).queue(.verify), job.encoded())
            try await until("the foreign job is a dead letter", within: .seconds(20)) {
                try await pipeline.redis.send("LLEN", keys.inBucket(0).dead).int == 1
            }
            let letter = try #require(try await pipeline.redis.send("LINDEX", keys.inBucket(0).dead, "0").string)
            #expect(letter.contains("foreign_ticket"))
            #expect(try await pipeline.redis.send("EXISTS", keys.ticket(foreign)).int == 0)
            // The bucket still takes receipts.
            let ticket = try await pipeline.submit(receipt([gold("9900")]), user: "after")
            #expect(try await pipeline.terminal(ticket).status == .granted)
        }
    }

    /// On a cluster the prefix says the layout: one hash tag keeps one slot (one bucket); a plain
    /// prefix spreads the keys over 64 buckets unless IAP_BUCKETS says otherwise; a mix is refused.
    @Test func onRedisClusterThePrefixSaysTheLayout() throws {
        let cluster = "redis-cluster://127.0.0.1:7000"
        #expect(try PipelineConfiguration(environment: ["IAP_REDIS_URL": cluster, "IAP_PREFIX": "{iap}"]).redis.layout.count == 1)
        #expect(try PipelineConfiguration(environment: ["IAP_REDIS_URL": cluster, "IAP_PREFIX": "iap"]).redis.layout.count == 64)
        #expect(try PipelineConfiguration(environment: ["IAP_REDIS_URL": cluster, "IAP_BUCKETS": "16"]).redis.layout.count == 16)
        #expect(throws: ConfigurationError.self) {
            try PipelineConfiguration(environment: ["IAP_REDIS_URL": cluster, "IAP_PREFIX": "{iap}", "IAP_BUCKETS": "4"])
        }
        #expect(throws: ConfigurationError.self) {
            try PipelineConfiguration(environment: ["IAP_REDIS_URL": cluster, "IAP_PREFIX": "iap", "IAP_BUCKETS": "1"])
        }
        // Outside a cluster the default stays one bucket, today's names.
        #expect(try PipelineConfiguration(environment: ["IAP_PREFIX": "iap"]).redis.layout.count == 1)
        #expect(throws: ConfigurationError.self) { try PipelineConfiguration(environment: ["IAP_BUCKETS": "1025"]) }
        #expect(throws: ConfigurationError.self) { try PipelineConfiguration(environment: ["IAP_BUCKETS": "0"]) }
    }
}
