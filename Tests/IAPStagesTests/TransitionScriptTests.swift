import AppleReceipt
import Foundation
import PipelineCore
import IAPStages
import RedisClient
import TestSupport
import PipelineTestSupport
import Testing

/// Each transition script on its own, against a real Redis.
@Suite struct TransitionScriptTests {
    static let keys = RedisKeys(prefix: "{t}iap")
    static let member = "verify:w1"

    static func job(_ ticket: String = "T1", stage: Stage = .verify) -> Job {
        let job = Job(ticket: ticket, userID: "u1", receiptData: "cmVjZWlwdA==", productID: nil, transactionID: nil, enqueuedAt: 1)
        return moved(job, to: stage)
    }

    /// The job as the stage before `stage` forwards it (an empty receipt, nothing claimed).
    static func moved(_ job: Job, to stage: Stage) -> Job {
        let receipt = VerifiedReceipt(environment: "Production", bundleID: "b", transactions: [])
        switch stage {
        case .dedupe: return job.movedToDedupe(with: receipt)
        case .grant: return job.movedToDedupe(with: receipt).movedToGrant([], in: receipt)
        default: return job
        }
    }

    /// Submits a job and moves it into `member`'s in-flight list as a worker would.
    static func held(_ store: PipelineStore, _ job: Job, member: String = member) async throws -> String {
        _ = try await store.submit(job, receiptDigest: "d-\(job.ticket)", ttl: .seconds(3600))
        let payload = try await store.redis.send("RPOP", keys.queue(.verify)).string!
        var moved = try Job.decode(payload)
        moved.stage = job.stage
        moved.work = job.work
        let exact = moved.encoded()
        try await store.redis.send("LPUSH", keys.inflight(member: member), exact)
        return exact
    }

    static func list(_ redis: RedisClient, _ key: String) async throws -> [String] {
        try await redis.send("LRANGE", key, "0", "-1").array!.compactMap(\.string)
    }

    static func hash(_ redis: RedisClient, _ key: String) async throws -> [String: String] {
        try await redis.send("HGETALL", key).stringDictionary
    }

    @Test func submitReceiptQueuesOnceAndAnswersResubmissionsWithTheSameTicket() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let first = try await store.submit(Self.job("A"), receiptDigest: "digest", ttl: .seconds(3600))
            let again = try await store.submit(Self.job("B"), receiptDigest: "digest", ttl: .seconds(3600))
            #expect(first.ticket == "A" && first.created)
            #expect(again.ticket == "A" && !again.created)
            #expect(try await Self.list(redis, Self.keys.queue(.verify)).count == 1)
            #expect(try await redis.send("EXISTS", Self.keys.ticket("B")) == .integer(0))
            let ticket = try await Self.hash(redis, Self.keys.ticket("A"))
            #expect(ticket["status"] == "queued" && ticket["user_id"] == "u1")
            #expect(try await redis.send("TTL", Self.keys.ticket("A")).int! > 3000)
        }
    }

    /// The batch form: each submission as if alone, in order, in one call. A new receipt is
    /// queued; a resubmission names its ticket, is called again alone with that ticket declared,
    /// and is answered with it; a new one past the depth the first filled is refused.
    @Test func submitReceiptInABatchAnswersEachAsIfAlone() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            #expect(try await store.submit(Self.job("A"), receiptDigest: "a", ttl: .seconds(60)).created)
            let calls = [
                SubmitReceipt(Self.keys, job: Self.job("B"), receiptDigest: "b", ttl: .seconds(60), maxDepth: 2),
                SubmitReceipt(Self.keys, job: Self.job("C"), receiptDigest: "a", ttl: .seconds(60), maxDepth: 2),
                SubmitReceipt(Self.keys, job: Self.job("D"), receiptDigest: "d", ttl: .seconds(60), maxDepth: 2),
            ]
            let replies = try await store.runBatch(calls, replicated: true)
            #expect(replies == [.queued(ticket: "B"), .resubmitted(ticket: "A"), .queueFull(depth: 2)])
            #expect(try await Self.list(redis, Self.keys.queue(.verify)).count == 2)
            #expect(try await redis.send("EXISTS", Self.keys.ticket("C"), Self.keys.ticket("D"), Self.keys.receipt(digest: "d")) == .integer(0))
            #expect(try await Self.hash(redis, Self.keys.ticket("B"))["status"] == "queued")
            // Through the intake's batchers: the same answers, one call per bucket.
            let batchers = SubmitBatchers(store: store)
            let again = try await store.submit(Self.job("E"), receiptDigest: "b", ttl: .seconds(60), batching: batchers)
            #expect(again.ticket == "B" && !again.created)
        }
    }

    /// Backpressure: past the depth (queued plus due a retry) a new submission is refused and
    /// stores nothing; a resubmission still names its ticket; once the queue drains, it is taken.
    @Test func submitReceiptRefusesANewJobPastTheQueueDepthButNotAResubmission() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let limits = SubmissionLimits(maxQueueDepth: 2)
            #expect(try await store.submit(Self.job("A"), receiptDigest: "a", ttl: .seconds(60), limits: limits).created)
            try await redis.send("ZADD", Self.keys.retry, "1", "a job due a retry")
            await #expect(throws: QueueFull(depth: 2, limit: 2)) {
                try await store.submit(Self.job("B"), receiptDigest: "b", ttl: .seconds(60), limits: limits)
            }
            #expect(try await redis.send("EXISTS", Self.keys.ticket("B"), Self.keys.receipt(digest: "b")) == .integer(0))
            #expect(try await Self.list(redis, Self.keys.queue(.verify)).count == 1)
            let resent = try await store.submit(Self.job("C"), receiptDigest: "a", ttl: .seconds(60), limits: limits)
            #expect(resent.ticket == "A" && !resent.created)
            try await redis.send("DEL", Self.keys.retry)
            #expect(try await store.submit(Self.job("B"), receiptDigest: "b", ttl: .seconds(60), limits: limits).created)
            // No limit: 0.
            #expect(try await store.submit(Self.job("D"), receiptDigest: "d", ttl: .seconds(60), limits: .none).created)
        }
    }

    @Test func eachBucketTakesItsEvenShareOfTheDepth() {
        #expect(PipelineStore.bucketShare(of: 0, buckets: 64) == 0)
        #expect(PipelineStore.bucketShare(of: 100_000, buckets: 1) == 100_000)
        #expect(PipelineStore.bucketShare(of: 100_000, buckets: 64) == 1563)
        #expect(PipelineStore.bucketShare(of: 10, buckets: 64) == 1)
    }

    /// Rate limits count new submissions in the second of `enqueuedAt`, per user and per client
    /// key; a resubmission is free, another user or the next second has its own window.
    @Test func submitReceiptRefusesNewSubmissionsOverALimitButNotResubmissions() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            func job(_ ticket: String, user: String = "u1", at ms: Int64 = 5_000_500) -> Job {
                Job(ticket: ticket, userID: user, receiptData: "cmVjZWlwdA==", productID: nil, transactionID: nil, enqueuedAt: ms)
            }
            let perUser = SubmissionLimits(perUser: 2)
            #expect(try await store.submit(job("A"), receiptDigest: "a", ttl: .seconds(60), limits: perUser).created)
            // The window expires within 10 s of its first use: a TTL of at most 10 s, never none (-1).
            let window = Self.keys.rateWindow(user: "u1", second: 5000)
            let ttl = try await redis.send("TTL", window).int
            #expect(ttl == -2 || ttl.map { (0...10).contains($0) } == true, "TTL \(String(describing: ttl))")
            // Pinned for the rest of the test: a machine stalled past 10 s must not empty the window
            // under the count this test checks.
            try await redis.send("PERSIST", window)
            #expect(try await store.submit(job("B"), receiptDigest: "b", ttl: .seconds(60), limits: perUser).created)
            await #expect(throws: RateLimitExceeded(scope: .user)) {
                try await store.submit(job("C"), receiptDigest: "c", ttl: .seconds(60), limits: perUser)
            }
            let resent = try await store.submit(job("A2"), receiptDigest: "a", ttl: .seconds(60), limits: perUser)
            #expect(resent.ticket == "A" && !resent.created)
            #expect(try await store.submit(job("D", user: "u2"), receiptDigest: "d", ttl: .seconds(60), limits: perUser).created)
            #expect(try await store.submit(job("E", at: 5_001_000), receiptDigest: "e", ttl: .seconds(60), limits: perUser).created)
            // Refused: no ticket, no digest, nothing queued.
            #expect(try await redis.send("EXISTS", Self.keys.ticket("C"), Self.keys.receipt(digest: "c")) == .integer(0))
            #expect(try await Self.list(redis, Self.keys.queue(.verify)).count == 4)

            let perKey = SubmissionLimits(clientKey: "backend-1", perKey: 1)
            #expect(try await store.submit(job("F", user: "u3"), receiptDigest: "f", ttl: .seconds(60), limits: perKey).created)
            try await redis.send("PERSIST", Self.keys.rateWindow(clientKey: "backend-1", second: 5000))
            await #expect(throws: RateLimitExceeded(scope: .clientKey)) {
                try await store.submit(job("G", user: "u4"), receiptDigest: "g", ttl: .seconds(60), limits: perKey)
            }
            // Unsigned (no key): the per-key limit does not apply.
            let unsigned = SubmissionLimits(perKey: 1)
            #expect(try await store.submit(job("H", user: "u5"), receiptDigest: "h", ttl: .seconds(60), limits: unsigned).created)
        }
    }

    @Test func forwardJobMovesOnlyAJobTheWorkerStillHolds() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let payload = try await Self.held(store, Self.job())
            var next = try Job.decode(payload)
            next.stage = .dedupe
            #expect(try await store.forward(payload, member: Self.member, to: next, ticketFields: [("environment", "Sandbox")]) == .moved)
            #expect(try await Self.list(redis, Self.keys.inflight(member: Self.member)).isEmpty)
            #expect(try await Self.list(redis, Self.keys.queue(.dedupe)) == [next.encoded()])
            #expect(try await Self.hash(redis, Self.keys.ticket("T1"))["environment"] == "Sandbox")
            // Again: the worker no longer holds it, so nothing moves.
            #expect(try await store.forward(payload, member: Self.member, to: next) == .leaseLost)
            #expect(try await Self.list(redis, Self.keys.queue(.dedupe)).count == 1)
        }
    }

    @Test func takeJobsMovesUpToMaxOldestFirstAndNothingFromAnEmptyQueue() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            #expect(try await store.takeJobs(from: .dedupe, member: "dedupe:w1", max: 8).isEmpty)
            // LPUSH is how jobs are queued: j1 is the oldest.
            for index in 1...5 { try await redis.send("LPUSH", Self.keys.queue(.dedupe), "j\(index)") }
            #expect(try await store.takeJobs(from: .dedupe, member: "dedupe:w1", max: 3) == ["j1", "j2", "j3"])
            #expect(try await Self.list(redis, Self.keys.queue(.dedupe)) == ["j5", "j4"])
            // The in-flight list reads as BLMOVE would have left it: newest first.
            #expect(try await Self.list(redis, Self.keys.inflight(member: "dedupe:w1")) == ["j3", "j2", "j1"])
            #expect(try await store.takeJobs(from: .dedupe, member: "dedupe:w1", max: 10) == ["j4", "j5"])
            #expect(try await redis.send("EXISTS", Self.keys.queue(.dedupe)) == .integer(0))
        }
    }

    @Test func markVerifyingMarksQueuedTicketsOnceAndReportsTheMissing() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            for ticket in ["T1", "T2", "T3"] { _ = try await Self.held(store, Self.job(ticket)) }
            try await redis.send("HSET", Self.keys.ticket("T2"), "status", "granted")
            let missing = try await store.markVerifying(tickets: ["T1", "GONE", "T2", "T3"], now: 77)
            #expect(missing == ["GONE"])
            #expect(try await Self.hash(redis, Self.keys.ticket("T1"))["status"] == "verifying")
            #expect(try await Self.hash(redis, Self.keys.ticket("T3"))["updated_at"] == "77")
            // A ticket past verification keeps its status.
            #expect(try await Self.hash(redis, Self.keys.ticket("T2"))["status"] == "granted")
        }
    }

    @Test func aBatchOfForwardsAndClaimsMovesEachJobAsIfAlone() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let held = try await Self.held(store, Self.job("T1"))
            let stolen = try await Self.held(store, Self.job("T2"))
            let orphan = try await Self.held(store, Self.job("T3"))
            try await redis.send("LREM", Self.keys.inflight(member: Self.member), "1", stolen)
            try await redis.send("DEL", Self.keys.ticket("T3"))
            func next(_ payload: String, _ stage: Stage) throws -> Job {
                Self.moved(try Job.decode(payload), to: stage)
            }
            let results = try await store.forward([
                .init(payload: held, next: try next(held, .dedupe), ticketFields: [("environment", "Sandbox")]),
                .init(payload: stolen, next: try next(stolen, .dedupe)),
                .init(payload: orphan, next: try next(orphan, .dedupe), ticketFields: [("attempts", "1")]),
            ], member: Self.member)
            #expect(results == [.moved, .leaseLost, .ticketMissing])
            #expect(try await Self.list(redis, Self.keys.queue(.dedupe)) == [try next(held, .dedupe).encoded()])
            #expect(try await Self.hash(redis, Self.keys.ticket("T1"))["environment"] == "Sandbox")
            #expect(try await Self.list(redis, Self.keys.inflight(member: Self.member)) == [orphan])

            // Claims: two jobs with their own units, one of them redelivered after its claim.
            var first = try next(held, .dedupe).movedToGrant(
                [Purchase(transactionID: "t1", originalTransactionID: "t1", productID: "p", quantity: 1, unit: "u1", outcome: .pending, reason: nil)],
                in: nil)
            let second = try Job.decode(try await Self.held(store, Self.job("T4"), member: "dedupe:w1")).movedToDedupe(with: nil).movedToGrant([
                Purchase(transactionID: "t2", originalTransactionID: "t2", productID: "p", quantity: 1, unit: "u2", outcome: .pending, reason: nil),
                Purchase(transactionID: "t3", originalTransactionID: "t3", productID: "p", quantity: 1, unit: "u3", outcome: .pending, reason: nil),
            ], in: nil)
            let firstTaken = try await Self.held(store, Self.job("T5"), member: "dedupe:w1")
            first.ticket = "T5"
            let secondTaken = try await Self.list(redis, Self.keys.inflight(member: "dedupe:w1")).last!
            try await redis.send("SET", Self.keys.claim(unit: "u2"), "T4")
            let claimed = try await store.claimAndForward([(firstTaken, first), (secondTaken, second)], member: "dedupe:w1")
            #expect(claimed == [.moved, .moved])
            #expect(try await redis.send("GET", Self.keys.claim(unit: "u1")).string == "T5")
            #expect(try await redis.send("GET", Self.keys.claim(unit: "u2")).string == "T4")
            #expect(try await redis.send("GET", Self.keys.claim(unit: "u3")).string == "T4")
            #expect(try await Self.list(redis, Self.keys.queue(.grant)).count == 2)
            #expect(try await Self.list(redis, Self.keys.inflight(member: "dedupe:w1")).isEmpty)
        }
    }

    @Test func transitionsLeaveTheJobWhenTheTicketIsGone() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let payload = try await Self.held(store, Self.job())
            try await redis.send("DEL", Self.keys.ticket("T1"))
            var next = try Job.decode(payload)
            next.stage = .dedupe
            #expect(try await store.forward(payload, member: Self.member, to: next) == .ticketMissing)
            #expect(try await store.markVerifying(ticket: "T1") == false)
            #expect(try await Self.list(redis, Self.keys.inflight(member: Self.member)) == [payload])
            #expect(try await store.deadLetter(
                payload, member: Self.member, stage: .verify, ticket: "T1", reason: "ticket_missing", error: "gone",
                attempts: 0) == .moved)
            #expect(try await redis.send("EXISTS", Self.keys.ticket("T1")) == .integer(0))
            let letter = try DeadLetter.decode(try await Self.list(redis, Self.keys.dead)[0])
            #expect(letter.reason == "ticket_missing" && letter.job == payload && letter.ticket == "T1")
        }
    }

    @Test func scheduleRetryParksTheJobAndPromoteDueRetriesBringsItBack() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let payload = try await Self.held(store, Self.job())
            var next = try Job.decode(payload)
            next.attempts = 1
            #expect(try await store.scheduleRetry(payload, member: Self.member, next: next, delay: .milliseconds(4000), lastError: "apple_http_503", now: 1000) == .moved)
            let ticket = try await Self.hash(redis, Self.keys.ticket("T1"))
            #expect(ticket["status"] == "retrying" && ticket["attempts"] == "1" && ticket["last_error"] == "apple_http_503")
            #expect(try await redis.send("ZSCORE", Self.keys.retry, next.encoded()).int == 5000)
            try await redis.send("ZADD", Self.keys.retry, "10", "not a job")
            #expect(try await store.promoteDueRetries(now: 4999) == 1)
            #expect(try await Self.list(redis, Self.keys.queue(.verify)).isEmpty)
            #expect(try await Self.list(redis, Self.keys.dead).count == 1)
            #expect(try await store.promoteDueRetries(now: 5000) == 1)
            #expect(try await Self.list(redis, Self.keys.queue(.verify)) == [next.encoded()])
            #expect(try await redis.send("ZCARD", Self.keys.retry) == .integer(0))
        }
    }

    /// Unpinned, a retry is due by Redis's clock: its delay from Redis's TIME, promoted only once
    /// Redis's TIME reaches it (no host's clock is read).
    @Test func aRetryIsDueByRedisClock() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let payload = try await Self.held(store, Self.job())
            var next = try Job.decode(payload)
            next.attempts = 1
            let before = try await redisTimeMs(redis)
            #expect(try await store.scheduleRetry(payload, member: Self.member, next: next, delay: .seconds(3600), lastError: "apple_http_503") == .moved)
            let after = try await redisTimeMs(redis)
            let due = try #require(try await redis.send("ZSCORE", Self.keys.retry, next.encoded()).string.flatMap { Int64($0) })
            #expect(due >= before + 3_600_000 && due <= after + 3_600_000, "due \(due), Redis's TIME \(before)…\(after)")
            #expect(try await store.promoteDueRetries() == 0)
            #expect(try await store.promoteDueRetries(now: due) == 1)
        }
    }

    @Test func deadLetterJobRecordsWhyAndMarksTheTicketDead() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let payload = try await Self.held(store, Self.job())
            #expect(try await store.deadLetter(
                payload, member: Self.member, stage: .verify, ticket: "T1", reason: "retries_exhausted",
                error: "apple_http_503: down", attempts: 12, now: 42) == .moved)
            let letter = try DeadLetter.decode(try await Self.list(redis, Self.keys.dead)[0])
            #expect(letter == DeadLetter(job: payload, stage: "verify", reason: "retries_exhausted", error: "apple_http_503: down", attempts: 12, at: 42, ticket: "T1"))
            let ticket = try await Self.hash(redis, Self.keys.ticket("T1"))
            #expect(ticket["status"] == "dead" && ticket["reason"] == "retries_exhausted" && ticket["attempts"] == "12")
            #expect(try await store.deadLetter(
                payload, member: Self.member, stage: .verify, ticket: "T1", reason: "x", error: "y", attempts: 1) == .leaseLost)
            #expect(try await Self.list(redis, Self.keys.dead).count == 1)
        }
    }

    @Test func finishTicketRejects() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let payload = try await Self.held(store, Self.job())
            #expect(try await store.finish(
                payload, member: Self.member, ticket: "T1", status: .rejected, reason: "invalid_signature", attempts: 1,
                environment: "Production", lastError: "signature does not verify", now: 1_763_800_000_123) == .moved)
            let ticket = try #require(try await store.ticket("T1"))
            #expect(ticket.status == .rejected && ticket.reason == "invalid_signature" && ticket.environment == "Production")
            let hash = try await redis.send("HGETALL", Self.keys.ticket("T1")).stringDictionary
            #expect(hash["last_error"] == "signature does not verify" && hash["updated_at"] == "1763800000123")
            #expect(hash["attempts"] == "1" && hash["transactions"] == "[]")
            #expect(try await Self.list(redis, Self.keys.inflight(member: Self.member)).isEmpty)
        }
    }

    static func grantJob(_ ticket: String, _ purchases: [Purchase]) -> Job {
        job(ticket, stage: .dedupe).movedToGrant(purchases, in: VerifiedReceipt(environment: "Production", bundleID: "b", transactions: []))
    }

    static func pending(_ tx: String, unit: String? = nil) -> Purchase {
        Purchase(transactionID: tx, originalTransactionID: tx, productID: "gold", quantity: 1, unit: unit ?? tx, outcome: .pending)
    }

    @Test func claimPurchasesClaimsEachUnitOnceAndForwards() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            try await redis.send("SET", Self.keys.claim(unit: "2"), "OTHER")
            let job = Self.job("T1", stage: .dedupe)
            let payload = try await Self.held(store, job, member: "dedupe:w1")
            let next = Self.grantJob("T1", [Self.pending("1"), Self.pending("2")])
            #expect(try await store.claimAndForward(payload, member: "dedupe:w1", to: next) == .moved)
            #expect(try await redis.send("GET", Self.keys.claim(unit: "1")).string == "T1")
            #expect(try await redis.send("GET", Self.keys.claim(unit: "2")).string == "OTHER")
            #expect(try await Self.list(redis, Self.keys.queue(.grant)) == [next.encoded()])
        }
    }

    @Test func grantPurchasesGrantsOnceEvenWhenRunTwice() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            try await redis.send("SET", Self.keys.claim(unit: "2"), "OTHER")
            try await redis.send("SET", Self.keys.claim(unit: "1"), "T1")
            let refunded = Purchase(transactionID: "3", originalTransactionID: "3", productID: "gold", quantity: 1, unit: nil, outcome: .rejected, reason: "refunded")
            let job = Self.grantJob("T1", [Self.pending("1"), Self.pending("2"), refunded])
            let payload = try await Self.held(store, job, member: "grant:w1")
            let (result, status) = try await store.grant(payload, member: "grant:w1", job: job)
            #expect(result == .moved && status == .granted)
            #expect(try await redis.send("XLEN", Self.keys.fulfilment) == .integer(1))
            let record = try await Self.hash(redis, Self.keys.grant(unit: "1"))
            #expect(record["ticket"] == "T1" && record["user_id"] == "u1" && record["product_id"] == "gold")
            #expect(try await redis.send("EXISTS", Self.keys.grant(unit: "2")) == .integer(0))
            let ticket = try #require(try await store.ticket("T1"))
            #expect(ticket.status == .granted)
            #expect(ticket.transactions.map(\.outcome) == [.granted, .duplicate, .rejected])
            #expect(ticket.transactions[2].reason == "refunded")
            // The same job again (a redelivery after the first run): it grants nothing new.
            try await redis.send("LPUSH", Self.keys.inflight(member: "grant:w1"), payload)
            let (again, againStatus) = try await store.grant(payload, member: "grant:w1", job: job)
            #expect(again == .moved && againStatus == .granted)
            #expect(try await redis.send("XLEN", Self.keys.fulfilment) == .integer(1))
            // Not held any more: nothing at all happens.
            #expect(try await store.grant(payload, member: "grant:w1", job: job).0 == .leaseLost)
        }
    }

    /// The batch form: each job's step as if it ran alone, in order, in one call. A second job
    /// for a unit the first just granted is a duplicate; a job the worker no longer holds moves
    /// nothing; a renewal whose owner is another user names that user's keys, writes nothing, and
    /// is called again alone with them declared.
    @Test func grantPurchasesInABatchRunsEachJobAsIfAlone() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let member = "grant:w1"
            try await redis.send("SET", Self.keys.claim(unit: "1"), "T1")
            let first = Self.grantJob("T1", [Self.pending("1")])
            let again = Self.grantJob("T2", [Self.pending("1")])
            let gone = Self.grantJob("T3", [Self.pending("3")])
            var period = Self.pending("5", unit: "5")
            period.originalTransactionID = "4"
            period.kind = "auto_renewable"
            try await redis.send("SET", Self.keys.claim(unit: "5"), "T4")
            try await redis.send("SET", Self.keys.owner(originalTransactionID: "4"), "u7")
            let renewal = Self.grantJob("T4", [period])
            var steps: [GrantPurchases] = []
            var payloads: [String] = []
            for job in [first, again, gone, renewal] {
                payloads.append(try await Self.held(store, job, member: member))
                steps.append(GrantPurchases(Self.keys, member: member, taken: payloads.last!, job: job, refunds: nil, recheck: nil, now: 1000))
            }
            try await redis.send("LREM", Self.keys.inflight(member: member), "0", payloads[2])
            let answers = try await store.runBatch(steps, replicated: true)
            #expect(answers.map(\.0) == [.moved, .moved, .leaseLost, .moved])
            #expect(answers.map { $0.1?.status } == [.granted, .duplicate, nil, .duplicate])
            #expect(answers[3].1?.transactions.contains("owned_by_another_account") == true)
            #expect(try await Self.hash(redis, Self.keys.grant(unit: "1"))["ticket"] == "T1")
            #expect(try await Self.hash(redis, Self.keys.grant(unit: "5"))["user_id"] == "u7")
            #expect(try await redis.send("XLEN", Self.keys.fulfilment) == .integer(2))
            #expect(try await store.ticket("T3")?.status != .granted)
            #expect(try await Self.list(redis, Self.keys.inflight(member: member)).isEmpty)
        }
    }

    /// Set App Account Token: the grant of a purchase without a token, to a user who has one,
    /// queues one errand on the notify queue with its ticket, in the grant's own step; a purchase
    /// with its own token, a family member's, or one granted again queues none.
    @Test func grantPurchasesQueuesTheAccountTokenErrandOfATokenlessPurchase() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let token = "0b6f8a8e-3c1d-4c5e-9f1a-2b3c4d5e6f70"
            #expect(try await store.bindAccountToken(token.uppercased(), to: "u1") == "u1")
            #expect(try await store.accountToken(ofUser: "u1") == token)
            // Another user's token never becomes a user's own, even granted beside theirs.
            let mine = "1d2e3f40-0000-4000-8000-000000000001"
            #expect(try await store.bindAccountTokens([token], to: "u9") == [token: "u1"])
            #expect(try await store.accountToken(ofUser: "u9") == nil)
            #expect(try await store.bindAccountTokens([token, mine], to: "u9") == [token: "u1", mine: "u9"])
            #expect(try await store.accountToken(ofUser: "u9") == mine)
            // The granter reads several users' tokens at once, each answer in its user's place.
            #expect(try await store.accountTokens(ofUsers: ["u1", "u9", "u5", "u1"]) == [token, mine, nil, token])
            for id in ["1", "2", "3"] { try await redis.send("SET", Self.keys.claim(unit: id), "T1") }
            var job = Self.grantJob("T1", [Self.pending("1"), Self.pending("2"), Self.pending("3")])
            var own = InAppTransaction(transactionID: "2", productID: "gold")
            own.appAccountToken = "5d0c1e2f-0000-4000-8000-000000000002"
            var family = InAppTransaction(transactionID: "3", productID: "gold")
            family.inAppOwnershipType = "FAMILY_SHARED"
            job = job.movedToGrant(job.grantPurchases, in: VerifiedReceipt(
                environment: "Sandbox", bundleID: "b", transactions: [InAppTransaction(transactionID: "1", productID: "gold"), own, family]))
            let payload = try await Self.held(store, job, member: "grant:w1")
            let (result, outcome) = try await store.grantOutcome(payload, member: "grant:w1", job: job, tokenTickets: .seconds(3600))
            #expect(result == .moved && outcome?.status == .granted)
            let queued = try await Self.list(redis, Self.keys.queue(.notify))
            #expect(queued.count == 1)
            let errand = try Job.decode(try #require(queued.first))
            #expect(errand.stage == .notify && errand.userID == "u1" && errand.source == "app_account_token" && errand.ticket == "token-1")
            #expect(errand.work == .setAppAccountToken(AppAccountTokenRequest(
                originalTransactionID: "1", appAccountToken: token, environment: "Sandbox", bundleID: "b")))
            let ticket = try await Self.hash(redis, Self.keys.ticket("token-1"))
            #expect(ticket["status"] == "queued" && ticket["source"] == "app_account_token" && ticket["original_transaction_id"] == "1")
            #expect(try await redis.send("TTL", Self.keys.ticket("token-1")).int.map { $0 > 0 && $0 <= 3600 } == true)
            // Redelivered: granted already, nothing queued again.
            try await redis.send("LPUSH", Self.keys.inflight(member: "grant:w1"), payload)
            #expect(try await store.grantOutcome(payload, member: "grant:w1", job: job, tokenTickets: .seconds(3600)).0 == .moved)
            #expect(try await Self.list(redis, Self.keys.queue(.notify)).count == 1)
            // Without the setting, or for a user with no token, nothing is queued either.
            try await redis.send("SET", Self.keys.claim(unit: "4"), "T2")
            let other = Self.grantJob("T2", [Self.pending("4")])
            var otherJob = other
            otherJob = otherJob.movedToGrant(
                otherJob.grantPurchases,
                in: VerifiedReceipt(environment: "Production", bundleID: "b", transactions: [InAppTransaction(transactionID: "4", productID: "gold")]))
            let payload2 = try await Self.held(store, otherJob, member: "grant:w1")
            #expect(try await store.grantOutcome(payload2, member: "grant:w1", job: otherJob).1?.status == .granted)
            #expect(try await Self.list(redis, Self.keys.queue(.notify)).count == 1)
        }
    }

    @Test func grantPurchasesEndsDuplicateOrRejected() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            try await redis.send("SET", Self.keys.claim(unit: "9"), "OTHER")
            let duplicate = Self.grantJob("T1", [Self.pending("9")])
            let payload = try await Self.held(store, duplicate, member: "grant:w1")
            #expect(try await store.grant(payload, member: "grant:w1", job: duplicate).1 == .duplicate)
            let rejected = Self.grantJob("T2", [Purchase(
                transactionID: "5", originalTransactionID: "5", productID: "x", quantity: 1, unit: nil, outcome: .rejected,
                reason: "refunded")])
            let payload2 = try await Self.held(store, rejected, member: "grant:w1")
            #expect(try await store.grant(payload2, member: "grant:w1", job: rejected).1 == .rejected)
            #expect(try await store.ticket("T2")?.reason == "refunded")
            #expect(try await redis.send("XLEN", Self.keys.fulfilment) == .integer(0))
        }
    }

    @Test func reapExpiredWorkersReturnsJobsInOrderAndDeadLettersPoison() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let first = try await Self.held(store, Self.job("T1"), member: "verify:stale")
            let second = try await Self.held(store, Self.job("T2"), member: "verify:stale")
            try await redis.send("LPUSH", Self.keys.inflight(member: "verify:stale"), "garbage")
            let fresh = try await Self.held(store, Self.job("T3"), member: "verify:fresh")
            try await redis.send("LPUSH", Self.keys.queue(.verify), "waiting")
            try await store.heartbeat(member: "verify:stale", now: 1000)
            try await store.heartbeat(member: "verify:fresh", now: 50_000)
            let result = try await store.reapExpiredWorkers(reaper: "r", lease: .milliseconds(30000), maxRedeliveries: 1, now: 60_000)
            #expect(result == .init(ran: true, workers: 1, returned: 2, deadLettered: 1))
            // Consumers take from the right: the oldest returned job comes first, before what waited.
            #expect(try await Self.list(redis, Self.keys.queue(.verify)) == ["waiting", second, first])
            #expect(try await Self.list(redis, Self.keys.inflight(member: "verify:fresh")) == [fresh])
            #expect(try await Self.hash(redis, Self.keys.ticket("T1"))["redeliveries"] == "1")
            // The silent worker stays in the set for a while: a BLMOVE it sent before going silent may
            // still deliver a job, and the next round returns that too.
            #expect(try await redis.send("ZSCORE", Self.keys.workers, "verify:stale") != .null)
            try await redis.send("LPUSH", Self.keys.inflight(member: "verify:stale"), "late")
            try await redis.send("DEL", Self.keys.reaperLock)
            let late = try await store.reapExpiredWorkers(reaper: "r", lease: .milliseconds(30000), maxRedeliveries: 1, now: 61_000)
            #expect(late == .init(ran: true, workers: 1, returned: 0, deadLettered: 1))
            #expect(try await redis.send("ZSCORE", Self.keys.workers, "verify:stale") != .null)
            // Silent past twice the lease, with nothing left: forgotten.
            try await redis.send("DEL", Self.keys.reaperLock)
            // (Its lock is held for an hour: the next reaper must meet it however slow the machine is.)
            #expect(try await store.reapExpiredWorkers(
                reaper: "r", lease: .milliseconds(30000), maxRedeliveries: 1, lock: .seconds(3600), now: 61_001).workers == 0)
            #expect(try await redis.send("ZSCORE", Self.keys.workers, "verify:stale") == .null)
            #expect(try DeadLetter.decode(try await Self.list(redis, Self.keys.dead)[0]).reason == "undecodable_job")
            // Another reaper inside the lock window does nothing.
            #expect(try await store.reapExpiredWorkers(reaper: "r2", lease: .milliseconds(30000), maxRedeliveries: 1, now: 60_000).ran == false)
            // Redelivered once more than allowed: poison.
            try await redis.send("DEL", Self.keys.reaperLock)
            try await redis.send("LPUSH", Self.keys.inflight(member: "verify:stale"), first)
            try await store.heartbeat(member: "verify:stale", now: 1000)
            let again = try await store.reapExpiredWorkers(reaper: "r", lease: .milliseconds(30000), maxRedeliveries: 1, now: 60_000)
            #expect(again.deadLettered == 1)
            #expect(try await store.ticket("T1")?.status == .dead)
            #expect(try await store.ticket("T1")?.reason == "poison_redelivered")
        }
    }

    @Test func requeueInflightHandsBackEverythingAndLeaves() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let first = try await Self.held(store, Self.job("T1"))
            let second = try await Self.held(store, Self.job("T2"))
            try await store.heartbeat(member: Self.member)
            #expect(try await store.requeueInflight(member: Self.member, stage: .verify) == 2)
            #expect(try await Self.list(redis, Self.keys.queue(.verify)) == [second, first])
            #expect(try await redis.send("ZCARD", Self.keys.workers) == .integer(0))
        }
    }

    @Test func replayDeadLetterQueuesOnceWithAttemptsReset() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            var job = Self.job()
            job.attempts = 12
            let payload = try await Self.held(store, job)
            _ = try await store.deadLetter(payload, member: Self.member, stage: .verify, ticket: "T1", reason: "retries_exhausted", error: "e", attempts: 12)
            let entry = try await Self.list(redis, Self.keys.dead)[0]
            #expect(try await store.replay(entry: entry, ttl: .seconds(3600)))
            #expect(try await store.replay(entry: entry, ttl: .seconds(3600)) == false)
            let queued = try await Self.list(redis, Self.keys.queue(.verify))
            #expect(queued.count == 1)
            #expect(try Job.decode(queued[0]).attempts == 0)
            let ticket = try await Self.hash(redis, Self.keys.ticket("T1"))
            #expect(ticket["status"] == "queued" && ticket["attempts"] == "0" && ticket["reason"] == nil)
            #expect(try await Self.list(redis, Self.keys.dead).isEmpty)
            try await redis.send("LPUSH", Self.keys.dead, "not json")
            await #expect(throws: DecodingError.self) { try await store.replay(entry: "not json", ttl: .seconds(1)) }
        }
    }
}
