import PlainJSON
import Foundation
import RedisClient

/// The pipeline's state in Redis: every transition of a job, each one atomic script.
package struct PipelineStore: Sendable {
    package let redis: RedisClient
    package let keys: RedisKeys
    /// What the transitions that create something a client or Apple is told about (a ticket, an
    /// accepted notification, a claim, a grant) wait for before they return; `nil`: nothing.
    package let replication: RedisReplication?
    /// When the steps that move a subscription schedule its next re-check; `nil`: never.
    package let recheck: RecheckSchedule?

    package init(
        redis: RedisClient, keys: RedisKeys, replication: RedisReplication? = nil, recheck: RecheckSchedule? = .standard
    ) {
        self.redis = redis
        self.keys = keys
        self.replication = replication
        self.recheck = recheck
    }

    /// The same store on other keys (another bucket's).
    package func with(keys: RedisKeys) -> PipelineStore {
        PipelineStore(redis: redis, keys: keys, replication: replication, recheck: recheck)
    }

    /// The store on the keys of every bucket, in order.
    package var everyBucket: [PipelineStore] { keys.everyBucket.map(with(keys:)) }

    // MARK: intake

    /// Stores the ticket and queues the job, or returns the ticket this user's receipt already has
    /// (which no rate limit counts). Throws `RateLimitExceeded` when a new submission finds a limit
    /// of `limits` spent in the second of `job.enqueuedAt`. The job goes to the bucket of the
    /// digest (a resubmission finds the first one there), its ticket id naming that bucket
    /// (`<bucket>.<id>`; the id alone with one bucket). `batching`: the step goes with the others
    /// of its bucket arriving meanwhile (the intake's, on this store's Redis); `nil`: alone.
    package func submit(
        _ job: Job, receiptDigest: String, ttl: Duration, limits: SubmissionLimits = .none, batching: SubmitBatchers? = nil
    ) async throws -> (ticket: String, created: Bool) {
        let bucket = keys.layout.bucket(ofDigest: receiptDigest)
        var job = job
        job.ticket = keys.layout.ticketID(job.ticket, inBucket: bucket)
        try await takeSubmissionPermits(limits, user: job.userID, receiptDigest: receiptDigest, now: job.enqueuedAt)
        let share = Self.bucketShare(of: limits.maxQueueDepth, buckets: keys.layout.count)
        let submit = SubmitReceipt(
            keys.inBucket(bucket), job: job, receiptDigest: receiptDigest, ttl: ttl, clientKey: limits.clientKey, maxDepth: share)
        let reply = if let batching {
            try await batching.submit(submit, bucket: bucket)
        } else {
            try await run(submit, replicated: true)
        }
        switch reply {
        case .queued(let ticket): return (ticket, true)
        case .resubmitted(let ticket): return (ticket, false)
        case .queueFull(let depth): throw QueueFull(depth: depth, limit: share)
        }
    }

    /// One bucket's even share of a fleet-wide limit (rounded up; 0 stays no limit): submissions
    /// spread evenly over buckets by their digest, and each bucket checks its own in one script.
    package static func bucketShare(of limit: Int, buckets: Int) -> Int {
        limit <= 0 ? 0 : (limit + buckets - 1) / max(buckets, 1)
    }

    /// A new submission counted in this second's windows of its client key and its user (each its
    /// own step: `take_submission_permit`); a resubmission (its receipt key exists) is free.
    /// Throws `RateLimitExceeded` for the first limit spent. Two identical submissions racing
    /// may both be counted; one of them is then answered as a resubmission.
    private func takeSubmissionPermits(_ limits: SubmissionLimits, user: String, receiptDigest: String, now: Int64) async throws {
        let perKey = limits.clientKey == nil ? 0 : limits.perKey
        guard perKey > 0 || limits.perUser > 0 else { return }
        if try await redis.send("EXISTS", keys.receipt(digest: receiptDigest)).int == 1 { return }
        let second = now / 1000
        if perKey > 0, let key = limits.clientKey,
            !(try await run(TakeSubmissionPermit(window: keys.rateWindow(clientKey: key, second: second), limit: perKey)))
        {
            throw RateLimitExceeded(scope: .clientKey)
        }
        if limits.perUser > 0,
            !(try await run(TakeSubmissionPermit(window: keys.rateWindow(user: user, second: second), limit: limits.perUser)))
        {
            throw RateLimitExceeded(scope: .user)
        }
    }

    package func ticket(_ id: String) async throws -> Ticket? {
        let hash = try await redis.send("HGETALL", keys.ticket(id)).stringDictionary
        return Ticket(id: id, hash: hash)
    }

    // MARK: workers

    /// Blocks (at most `block`) until a job is in `stage`'s queue and moves it into the worker's in-flight list.
    package func take(from stage: Stage, member: String, on connection: RedisConnection, block: Duration) async throws -> String? {
        let ms = Int(block.milliseconds)
        let fraction = String(ms % 1000)
        let seconds = "\(ms / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
        let reply = try await connection.execute(
            RedisCommand("BLMOVE", keys.queue(stage), keys.inflight(member: member), "RIGHT", "LEFT", seconds),
            blocking: block)
        if case .error(let message) = reply { throw RedisError.server(message) }
        return reply.string
    }

    /// Records that the worker lives, at Redis's time (`now`: a test's pinned time); returns that time.
    @discardableResult
    package func heartbeat(member: String, now: Int64? = nil) async throws -> Int64 {
        try await run(RecordHeartbeat(keys, member: member, now: now))
    }

    /// An intake says it runs (`intakes`), so that `iapctl migrate` does not move the ledger under it.
    package func announceIntake(_ id: String, now: Int64 = currentTimeMs()) async throws {
        try await redis.send("ZADD", keys.intakes, String(now), id)
    }

    /// An intake that stops says so.
    package func withdrawIntake(_ id: String) async throws {
        try await redis.send("ZREM", keys.intakes, id)
    }

    /// Moves up to `max` jobs from `stage`'s queue into the worker's in-flight list without
    /// blocking; none when the queue is empty.
    package func takeJobs(from stage: Stage, member: String, max: Int) async throws -> [String] {
        try await run(TakeJobs(keys, stage: stage, member: member, max: max))
    }

    package func forward(
        _ payload: String, member: String, to next: Job, ticketFields: [(String, String)] = []
    ) async throws -> TransitionResult {
        try await forward([Forward(payload: payload, next: next, ticketFields: ticketFields)], member: member)[0]
    }

    /// One job to forward: as taken, its next form, fields to set on its ticket.
    package struct Forward: Sendable {
        package var payload: String
        package var next: Job
        package var ticketFields: [(String, String)]

        package init(payload: String, next: Job, ticketFields: [(String, String)] = []) {
            self.payload = payload
            self.next = next
            self.ticketFields = ticketFields
        }
    }

    /// Forwards several of a worker's jobs in one script call; one result per job, in order.
    package func forward(_ jobs: [Forward], member: String) async throws -> [TransitionResult] {
        try await run(ForwardJob(keys, member: member, jobs: jobs)).onePerItem(of: jobs.count, script: ForwardJob.name)
    }

    /// Parks the job until `delay` past Redis's now (`now`: a test's pinned time).
    package func scheduleRetry(
        _ payload: String, member: String, next: Job, delay: Duration, lastError: String, now: Int64? = nil
    ) async throws -> TransitionResult {
        try await run(ScheduleRetry(keys, member: member, taken: payload, next: next, delay: delay, lastError: lastError, now: now))
    }

    /// `ticket` is `nil` for a job that could not be decoded.
    package func deadLetter(
        _ payload: String, member: String, stage: Stage, ticket: String?, reason: String, error: String,
        attempts: Int, now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        let entry = DeadLetter(
            job: payload, stage: stage.rawValue, reason: reason, error: error, attempts: attempts, at: now, ticket: ticket)
        return try await run(DeadLetterJob(keys, member: member, taken: payload, entry: entry, ticket: ticket, lastError: error))
    }

    /// `lastError` is the precise cause behind `reason` (kept on the ticket, never a secret).
    package func finish(
        _ payload: String, member: String, ticket: String, status: TicketStatus, reason: String, attempts: Int,
        environment: String?, lastError: String? = nil, result: String? = nil, transactions: String? = nil, now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        try await run(FinishTicket(
            keys, member: member, taken: payload, ticket: ticket, status: status, reason: reason, attempts: attempts,
            environment: environment, lastError: lastError, result: result, transactions: transactions, now: now))
    }

    /// Acks a job whose outcome is recorded elsewhere (`acknowledge_job`).
    package func acknowledge(_ payload: String, member: String, ownTicket: String) async throws -> TransitionResult {
        try await run(AcknowledgeJob(keys, member: member, taken: payload, ownTicket: ownTicket))
    }

    // MARK: housekeeping

    /// Moves the retries due by Redis's clock (`now`: a test's pinned time) back onto their queues.
    @discardableResult
    package func promoteDueRetries(now: Int64? = nil, limit: Int = 500) async throws -> Int {
        try await run(PromoteDueRetries(keys, now: now, limit: limit))
    }

    package struct ReapResult: Sendable, Equatable {
        /// `false` when another worker held the reaper lock.
        package var ran: Bool
        package var workers: Int
        package var returned: Int
        package var deadLettered: Int

        package init(ran: Bool, workers: Int, returned: Int, deadLettered: Int) {
            self.ran = ran
            self.workers = workers
            self.returned = returned
            self.deadLettered = deadLettered
        }
    }

    /// `forgetAfter`: how long a silent worker stays in `iap:workers` (reaped every round) so that
    /// a job its last BLMOVE delivers late is still returned; by default twice the lease. Leases
    /// are read against Redis's clock, as heartbeats are written (`now`: a test's pinned time).
    package func reapExpiredWorkers(
        reaper: String, lease: Duration, maxRedeliveries: Int, lock: Duration = .seconds(1), forgetAfter: Duration? = nil,
        now: Int64? = nil
    ) async throws -> ReapResult {
        try await run(ReapExpiredWorkers(
            keys, reaper: reaper, lease: lease, maxRedeliveries: maxRedeliveries, lock: lock, forgetAfter: forgetAfter ?? lease * 2,
            now: now))
    }

    /// The jobs a worker's in-flight list holds, oldest first.
    package func inflightJobs(member: String) async throws -> [String] {
        (try await redis.send("LRANGE", keys.inflight(member: member), "0", "-1").array ?? []).compactMap(\.string).reversed()
    }

    @discardableResult
    package func requeueInflight(member: String, stage: Stage) async throws -> Int {
        try await run(RequeueInflight(keys, member: member, stage: stage))
    }

    // MARK: operators

    /// The dead letters of every bucket (each bucket's newest first), at most `limit`.
    package func deadLetters(limit: Int) async throws -> [String] {
        var letters: [String] = []
        for bucket in keys.everyBucket where letters.count < limit {
            let reply = try await redis.send("LRANGE", bucket.dead, "0", String(max(limit - letters.count, 1) - 1))
            letters += (reply.array ?? []).compactMap(\.string)
        }
        return letters
    }

    /// Queues a dead letter's job again, attempts reset, on the queue of the bucket whose dead
    /// letters hold it. Returns `false` when the entry is gone (someone else replayed or purged
    /// it); throws when the entry holds no job to replay.
    package func replay(entry: String, ttl: Duration, now: Int64 = currentTimeMs()) async throws -> Bool {
        let job = try Self.replayable(entry)
        for bucket in keys.everyBucket {
            if try await run(ReplayDeadLetter(bucket, entry: entry, job: job, ttl: ttl, now: now)) { return true }
        }
        return false
    }

    /// The same for an entry read from bucket `bucket`'s dead letters (the console's windows):
    /// one script call, not one per bucket.
    package func replay(entry: String, inBucket bucket: Int, ttl: Duration, now: Int64 = currentTimeMs()) async throws -> Bool {
        try await run(ReplayDeadLetter(keys.everyBucket[bucket], entry: entry, job: try Self.replayable(entry), ttl: ttl, now: now))
    }

    /// A dead letter's job with its attempts reset, decoded once whatever buckets are tried.
    private static func replayable(_ entry: String) throws -> Job {
        var job = try Job.decode(try DeadLetter.decode(entry).job)
        job.attempts = 0
        return job
    }

    /// Deletes every bucket's dead letters; returns how many there were.
    package func purgeDeadLetters() async throws -> Int {
        var purged = 0
        for bucket in keys.everyBucket {
            let replies = try await redis.pipeline([RedisCommand("LLEN", bucket.dead), RedisCommand("DEL", bucket.dead)])
            purged += Int(replies.first?.int ?? 0)
        }
        return purged
    }
}
