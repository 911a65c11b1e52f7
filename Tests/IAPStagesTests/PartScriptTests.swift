import AppleReceipt
import PipelineCore
import IAPStages
import IAPOperations
import RedisClient
import TestSupport
import PipelineTestSupport
import Testing

/// A receipt whose purchases lie in several buckets: split into parts by the dedupe stage, each
/// part granted on its bucket, the client's ticket final once every part has reported. Each step
/// runs on a cluster node, which refuses a script whose keys lie in two slots.
@Suite struct PartScriptTests {
    static let layout = BucketLayout(count: 4)
    static let keys = RedisKeys(prefix: "iap", layout: layout)

    /// An original transaction id whose purchase lies in `bucket`.
    static func otid(inBucket bucket: Int, after start: Int = 0) -> String {
        var n = start
        while layout.bucket(ofOriginalTransactionID: "7\(n)") != bucket { n += 1 }
        return "7\(n)"
    }

    static func pending(_ otid: String) -> Purchase {
        Purchase(transactionID: otid, originalTransactionID: otid, productID: "gold", quantity: 1, unit: otid, outcome: .pending)
    }

    static func grantJob(ticket: String, _ purchases: [Purchase]) -> Job {
        Job(ticket: ticket, stage: .grant, userID: "u1",
            work: .grant(Job.Claimed(purchases: purchases, receipt: VerifiedReceipt(environment: "Production", bundleID: "b", transactions: []))),
            enqueuedAt: 1)
    }

    @Test func aJobWhosePurchasesLieInItsTicketsBucketIsNotSplit() {
        let ticket = Self.layout.ticketID("T1", inBucket: 2)
        let home = Self.grantJob(ticket: ticket, [Self.pending(Self.otid(inBucket: 2)), Self.pending(Self.otid(inBucket: 2, after: 50))])
        #expect(DedupeHandler.parts(of: home, layout: Self.layout) == nil)
        // With one bucket nothing is ever split.
        #expect(DedupeHandler.parts(of: Self.grantJob(ticket: "T1", [Self.pending("71")]), layout: BucketLayout(count: 1)) == nil)
        // Rejections alone claim nothing: no part.
        let rejected = Purchase(transactionID: "9", originalTransactionID: "9", productID: "x", quantity: 1, unit: nil, outcome: .rejected)
        #expect(DedupeHandler.parts(of: Self.grantJob(ticket: ticket, [rejected]), layout: Self.layout) == nil)
    }

    @Test func aJobIsSplitByTheBucketsOfItsPurchasesInTheReceiptsOrder() throws {
        let ticket = Self.layout.ticketID("T1", inBucket: 2)
        let (a, b, c) = (Self.otid(inBucket: 3), Self.otid(inBucket: 0), Self.otid(inBucket: 3, after: 50))
        let rejected = Purchase(transactionID: "9", originalTransactionID: "9", productID: "x", quantity: 1, unit: nil, outcome: .rejected)
        let job = Self.grantJob(ticket: ticket, [Self.pending(a), rejected, Self.pending(b), Self.pending(c)])
        let parts = try #require(DedupeHandler.parts(of: job, layout: Self.layout))
        #expect(parts.map(\.part) == ["3.\(ticket)", "0.\(ticket)"])
        #expect(parts.allSatisfy { $0.ticket == ticket && $0.stage == .grant })
        #expect(parts[0].claimed?.purchases.map(\.transactionID) == [a, "9", c])
        #expect(parts[1].claimed?.purchases.map(\.transactionID) == [b])
        // Each part's own ticket lives in its bucket.
        #expect(parts.map { Self.layout.bucket(ofTicket: $0.ownTicket) } == [3, 0])
    }

    @Test func claimPartQueuesOnceAndTheTicketIsFinalWhenEveryPartReportedInEitherOrder() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys.inBucket(2))
            let client = Self.layout.ticketID("T1", inBucket: 2)
            try await redis.send("HSET", Self.keys.ticket(client), "status", "queued", "user_id", "u1")
            var dedupe = Self.grantJob(ticket: client, [])
            dedupe.stage = .dedupe
            let submitted = dedupe.encoded()
            let (a, b) = (Self.otid(inBucket: 3), Self.otid(inBucket: 0))
            let parts = try #require(DedupeHandler.parts(
                of: Self.grantJob(ticket: client, [Self.pending(a), Self.pending(b)]), layout: Self.layout))
            #expect(try await store.claimPart(parts[0], ttl: .seconds(60)))
            #expect(try await store.claimPart(parts[0], ttl: .seconds(60)) == false)
            #expect(try await store.claimPart(parts[1], ttl: .seconds(60)))
            // Each part's units are claimed for the client's ticket, its job queued once on its bucket.
            #expect(try await redis.send("GET", Self.keys.claim(unit: a, originalTransactionID: a)).string == client)
            #expect(try await redis.send("LLEN", Self.keys.inBucket(3).queue(.grant)).int == 1)
            #expect(try await redis.send("HGET", Self.keys.ticket(parts[0].ownTicket), "parent").string == client)
            #expect(try await redis.send("TTL", Self.keys.ticket(parts[0].ownTicket)).int ?? 0 > 0)
            // A part's job is acked on its own bucket once its outcome is reported.
            let partStore = store.with(keys: Self.keys.inBucket(3))
            let payload = try #require(try await redis.send("RPOP", partStore.keys.queue(.grant)).string)
            try await redis.send("LPUSH", partStore.keys.inflight(member: "grant:w1"), payload)
            #expect(try await partStore.acknowledge(payload, member: "grant:w1", ownTicket: parts[0].ownTicket) == .moved)
            #expect(try await redis.send("LLEN", partStore.keys.inflight(member: "grant:w1")).int == 0)
            // One part reports before the job is split (a redelivered dedupe job): nothing final yet.
            let home = store
            let line = #"[{"transaction_id":"\#(b)","original_transaction_id":"\#(b)","product_id":"gold","quantity":1,"outcome":"granted"}]"#
            #expect(try await home.finishPart(
                ticket: client, part: parts[1].ownTicket,
                outcome: PartOutcome(status: .granted, transactions: line, reason: nil, environment: "Production")))
            try await redis.send("LPUSH", home.keys.inflight(member: "dedupe:w1"), submitted)
            #expect(try await home.split(submitted, member: "dedupe:w1", ticket: client, parts: parts.compactMap(\.part)) == .moved)
            #expect(try await home.ticket(client)?.status == .queued)
            // The last part reports: the ticket adds them up, in the parts' order.
            let dup = #"[{"transaction_id":"\#(a)","original_transaction_id":"\#(a)","product_id":"gold","quantity":1,"outcome":"duplicate"}]"#
            let outcome = PartOutcome(status: .duplicate, transactions: dup, reason: nil, environment: "Production")
            #expect(try await home.finishPart(ticket: client, part: parts[0].ownTicket, outcome: outcome))
            let final = try #require(try await home.ticket(client))
            #expect(final.status == .granted && final.transactions.map(\.transactionID) == [a, b])
            #expect(final.transactions.map(\.outcome) == [.duplicate, .granted])
            // Reported again (a redelivered part): the same ticket.
            #expect(try await home.finishPart(ticket: client, part: parts[0].ownTicket, outcome: outcome))
            let again = try #require(try await home.ticket(client))
            #expect(again.status == final.status && again.transactions == final.transactions)
            // A ticket that is gone: nothing to tell.
            #expect(try await home.finishPart(ticket: Self.layout.ticketID("gone", inBucket: 1), part: "x", outcome: outcome) == false)
        }
    }

    @Test func aPartsGrantKeepsItsJobUntilAcknowledgedAndTellsOnlyItsOwnTicket() async throws {
        try await withRedis { redis, _ in
            let client = Self.layout.ticketID("T1", inBucket: 2)
            let a = Self.otid(inBucket: 3)
            let part = try #require(DedupeHandler.parts(of: Self.grantJob(ticket: client, [Self.pending(a)]), layout: Self.layout))[0]
            let store = PipelineStore(redis: redis, keys: Self.keys.inBucket(3))
            #expect(try await store.claimPart(part, ttl: .seconds(60)))
            let payload = try #require(try await redis.send("RPOP", store.keys.queue(.grant)).string)
            try await redis.send("LPUSH", store.keys.inflight(member: "grant:w1"), payload)
            let (result, granted) = try await store.grantOutcome(payload, member: "grant:w1", job: part)
            #expect(result == .moved && granted?.status == .granted)
            #expect(try await redis.send("HGET", Self.keys.grant(unit: a, originalTransactionID: a), "ticket").string == client)
            #expect(try await redis.send("HGET", Self.keys.ticket(part.ownTicket), "status").string == "granted")
            // Still in flight: the outcome reaches the client's ticket first.
            #expect(try await redis.send("LLEN", store.keys.inflight(member: "grant:w1")).int == 1)
            // Granted once however often it runs.
            #expect(try await store.grantOutcome(payload, member: "grant:w1", job: part).1?.status == .granted)
            #expect(try await redis.send("XLEN", store.keys.fulfilment).int == 1)
            #expect(try await store.acknowledge(payload, member: "grant:w1", ownTicket: part.ownTicket) == .moved)
            #expect(try await store.acknowledge(payload, member: "grant:w1", ownTicket: part.ownTicket) == .leaseLost)
            #expect(try await store.grantOutcome(payload, member: "grant:w1", job: part).0 == .leaseLost)
        }
    }

    /// An operator releases a purchase one part held: the client's ticket says granted, and a
    /// part that reports again (a redelivery) adds up to the same.
    @Test func aReleaseOfAPartsHoldStaysOnTheTicketWhenAnotherPartReportsAgain() async throws {
        try await withRedis { redis, _ in
            let client = Self.layout.ticketID("T1", inBucket: 2)
            try await redis.send("HSET", Self.keys.ticket(client), "status", "queued", "user_id", "u1")
            let (a, b) = (Self.otid(inBucket: 3), Self.otid(inBucket: 0))
            var held = Self.pending(a)
            held.outcome = .held
            held.reason = "currency_unknown"
            let parts = try #require(DedupeHandler.parts(of: Self.grantJob(ticket: client, [held, Self.pending(b)]), layout: Self.layout))
            let home = PipelineStore(redis: redis, keys: Self.keys.ofTicket(client))
            var outcomes: [PartOutcome] = []
            for part in parts {
                let store = PipelineStore(redis: redis, keys: Self.keys.ofTicket(part.ownTicket))
                #expect(try await store.claimPart(part, ttl: .seconds(60)))
                let payload = try #require(try await redis.send("RPOP", store.keys.queue(.grant)).string)
                try await redis.send("LPUSH", store.keys.inflight(member: "grant:w1"), payload)
                let granted = try #require(try await store.grantOutcome(payload, member: "grant:w1", job: part).1)
                let outcome = PartOutcome(
                    status: granted.status, transactions: granted.transactions, reason: granted.reason, environment: "Production")
                #expect(try await home.finishPart(ticket: client, part: part.ownTicket, outcome: outcome))
                outcomes.append(outcome)
            }
            #expect(try await home.split("dedupe-job", member: "dedupe:w1", ticket: client, parts: parts.compactMap(\.part)) == .leaseLost)
            try await redis.send("LPUSH", home.keys.inflight(member: "dedupe:w1"), "dedupe-job")
            #expect(try await home.split("dedupe-job", member: "dedupe:w1", ticket: client, parts: parts.compactMap(\.part)) == .moved)
            #expect(try await home.ticket(client)?.status == .held)
            #expect(try await home.releaseHeld(unit: a, by: "ops") == .decided("released"))
            let released = try #require(try await home.ticket(client))
            #expect(released.status == .granted && released.transactions.map(\.outcome) == [.granted, .granted])
            // The other part reports again: the ticket stays as the operator left it.
            #expect(try await home.finishPart(ticket: client, part: parts[1].ownTicket, outcome: outcomes[1]))
            let again = try #require(try await home.ticket(client))
            #expect(again.status == .granted && again.transactions.map(\.outcome) == [.granted, .granted])
        }
    }
}
