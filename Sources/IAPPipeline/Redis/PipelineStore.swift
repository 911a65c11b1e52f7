import AppleJWS
import AppleReceipt
import PlainJSON
import Foundation
import RedisClient

/// The pipeline's state in Redis: every transition of a job, each one atomic script.
public struct PipelineStore: Sendable {
    public let redis: RedisClient
    public let keys: RedisKeys
    /// What the transitions that create something a client or Apple is told about (a ticket, an
    /// accepted notification, a claim, a grant) wait for before they return; `nil`: nothing.
    public let replication: RedisReplication?
    /// When the steps that move a subscription schedule its next re-check; `nil`: never.
    public let recheck: RecheckSchedule?

    public init(
        redis: RedisClient, keys: RedisKeys, replication: RedisReplication? = nil, recheck: RecheckSchedule? = .standard
    ) {
        self.redis = redis
        self.keys = keys
        self.replication = replication
        self.recheck = recheck
    }

    /// The same store on other keys (another bucket's).
    public func with(keys: RedisKeys) -> PipelineStore {
        PipelineStore(redis: redis, keys: keys, replication: replication, recheck: recheck)
    }

    /// The store on the keys of every bucket, in order.
    public var everyBucket: [PipelineStore] { keys.everyBucket.map(with(keys:)) }

    // MARK: intake

    /// Stores the ticket and queues the job, or returns the ticket this user's receipt already has
    /// (which no rate limit counts). Throws `RateLimitExceeded` when a new submission finds a limit
    /// of `limits` spent in the second of `job.enqueuedAt`. The job goes to the bucket of the
    /// digest (a resubmission finds the first one there), its ticket id naming that bucket
    /// (`<bucket>.<id>`; the id alone with one bucket).
    public func submit(
        _ job: Job, receiptDigest: String, ttl: Duration, limits: SubmissionLimits = .none
    ) async throws -> (ticket: String, created: Bool) {
        let bucket = keys.layout.bucket(ofDigest: receiptDigest)
        var job = job
        job.ticket = keys.layout.ticketID(job.ticket, inBucket: bucket)
        try await takeSubmissionPermits(limits, user: job.userID, receiptDigest: receiptDigest, now: job.enqueuedAt)
        let share = Self.bucketShare(of: limits.maxQueueDepth, buckets: keys.layout.count)
        let submit = SubmitReceipt(
            keys.inBucket(bucket), job: job, receiptDigest: receiptDigest, ttl: ttl, clientKey: limits.clientKey, maxDepth: share)
        switch try await run(submit, replicated: true) {
        case .queued(let ticket): return (ticket, true)
        case .resubmitted(let ticket): return (ticket, false)
        case .queueFull(let depth): throw QueueFull(depth: depth, limit: share)
        }
    }

    /// One bucket's even share of a fleet-wide limit (rounded up; 0 stays no limit): submissions
    /// spread evenly over buckets by their digest, and each bucket checks its own in one script.
    public static func bucketShare(of limit: Int, buckets: Int) -> Int {
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

    public func ticket(_ id: String) async throws -> Ticket? {
        let hash = try await redis.send("HGETALL", keys.ticket(id)).stringDictionary
        return Ticket(id: id, hash: hash)
    }

    // MARK: workers

    /// Blocks (at most `block`) until a job is in `stage`'s queue and moves it into the worker's in-flight list.
    public func take(from stage: Stage, member: String, on connection: RedisConnection, block: Duration) async throws -> String? {
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
    public func heartbeat(member: String, now: Int64? = nil) async throws -> Int64 {
        try await run(RecordHeartbeat(keys, member: member, now: now))
    }

    /// An intake says it runs (`intakes`), so that `iapctl migrate` does not move the ledger under it.
    public func announceIntake(_ id: String, now: Int64 = currentTimeMs()) async throws {
        try await redis.send("ZADD", keys.intakes, String(now), id)
    }

    /// An intake that stops says so.
    public func withdrawIntake(_ id: String) async throws {
        try await redis.send("ZREM", keys.intakes, id)
    }

    /// Moves up to `max` jobs from `stage`'s queue into the worker's in-flight list without
    /// blocking; none when the queue is empty.
    public func takeJobs(from stage: Stage, member: String, max: Int) async throws -> [String] {
        try await run(TakeJobs(keys, stage: stage, member: member, max: max))
    }

    /// Shows `verifying` on the tickets; returns those whose hash is gone.
    public func markVerifying(tickets: [String], now: Int64 = currentTimeMs()) async throws -> Set<String> {
        if tickets.isEmpty { return [] }
        let found = try await run(MarkVerifying(keys, tickets: tickets, now: now))
            .onePerItem(of: tickets.count, script: MarkVerifying.name)
        return Set(zip(tickets, found).filter { !$0.1 }.map(\.0))
    }

    /// Returns `false` when the ticket hash is gone.
    public func markVerifying(ticket: String, now: Int64 = currentTimeMs()) async throws -> Bool {
        try await markVerifying(tickets: [ticket], now: now).isEmpty
    }

    public func forward(
        _ payload: String, member: String, to next: Job, ticketFields: [(String, String)] = []
    ) async throws -> TransitionResult {
        try await forward([Forward(payload: payload, next: next, ticketFields: ticketFields)], member: member)[0]
    }

    /// One job to forward: as taken, its next form, fields to set on its ticket.
    public struct Forward: Sendable {
        public var payload: String
        public var next: Job
        public var ticketFields: [(String, String)]

        public init(payload: String, next: Job, ticketFields: [(String, String)] = []) {
            self.payload = payload
            self.next = next
            self.ticketFields = ticketFields
        }
    }

    /// Forwards several of a worker's jobs in one script call; one result per job, in order.
    public func forward(_ jobs: [Forward], member: String) async throws -> [TransitionResult] {
        try await run(ForwardJob(keys, member: member, jobs: jobs)).onePerItem(of: jobs.count, script: ForwardJob.name)
    }

    /// Parks the job until `delay` past Redis's now (`now`: a test's pinned time).
    public func scheduleRetry(
        _ payload: String, member: String, next: Job, delay: Duration, lastError: String, now: Int64? = nil
    ) async throws -> TransitionResult {
        try await run(ScheduleRetry(keys, member: member, taken: payload, next: next, delay: delay, lastError: lastError, now: now))
    }

    /// `ticket` is `nil` for a job that could not be decoded.
    public func deadLetter(
        _ payload: String, member: String, stage: Stage, ticket: String?, reason: String, error: String,
        attempts: Int, now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        let entry = DeadLetter(
            job: payload, stage: stage.rawValue, reason: reason, error: error, attempts: attempts, at: now, ticket: ticket)
        return try await run(DeadLetterJob(keys, member: member, taken: payload, entry: entry, ticket: ticket, lastError: error))
    }

    /// `lastError` is the precise cause behind `reason` (kept on the ticket, never a secret).
    public func finish(
        _ payload: String, member: String, ticket: String, status: TicketStatus, reason: String, attempts: Int,
        environment: String?, lastError: String? = nil, result: String? = nil, now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        try await run(FinishTicket(
            keys, member: member, taken: payload, ticket: ticket, status: status, reason: reason, attempts: attempts,
            environment: environment, lastError: lastError, result: result, now: now))
    }

    /// A user's place among the users of an Apple Account (`seat_apple_account`): whether it is
    /// within `limit` (`nil`: any number; the place is kept all the same).
    public func seatAppleAccount(_ appTransactionID: String, user: String, limit: Int?) async throws -> Bool {
        // The user's index first (its own slot on a cluster): a seat is never made that the
        // index misses; an index entry without its seat (a crash between) is the user's account anyway.
        try await redis.send("SADD", keys.userAppleAccounts(user: user), appTransactionID)
        return try await run(SeatAppleAccount(keys, appTransactionID: appTransactionID, user: user, limit: limit ?? Int(Int32.max)))
    }

    /// The Apple Accounts a user was seated on since the index was kept (`user-apple-accounts:`), sorted.
    public func appleAccounts(ofUser user: String) async throws -> [String] {
        (try await redis.send("SMEMBERS", keys.userAppleAccounts(user: user)).array ?? []).compactMap(\.string).sorted()
    }

    /// Whether `user` holds a seat on the Apple Account (its own hash says so: seats made before
    /// the user's index was kept count too).
    public func isSeated(_ user: String, onAppleAccount appTransactionID: String) async throws -> Bool {
        try await redis.send("HEXISTS", keys.appleAccount(appTransactionID), "u:\(user)").int == 1
    }

    /// The users who bought on, or bound, an Apple Account (`apple-account:<id>`), in the order
    /// they first did.
    public func appleAccountUsers(_ appTransactionID: String) async throws -> [String] {
        let reply = try await redis.send("HGETALL", keys.appleAccount(appTransactionID))
        if case .error(let message) = reply { throw RedisError.server(message) }
        let fields = reply.stringDictionary
        return fields.compactMap { name, place in name.hasPrefix("u:") ? (String(name.dropFirst(2)), Int(place) ?? .max) : nil }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.map(\.0)
    }

    public func claimAndForward(_ payload: String, member: String, to next: Job) async throws -> TransitionResult {
        try await claimAndForward([(payload, next)], member: member)[0]
    }

    /// Claims and forwards several of a worker's dedupe jobs in one script call; one result per job.
    public func claimAndForward(_ jobs: [(payload: String, next: Job)], member: String) async throws -> [TransitionResult] {
        try await run(ClaimPurchases(keys, member: member, jobs: jobs), replicated: true)
            .onePerItem(of: jobs.count, script: ClaimPurchases.name)
    }

    public func grant(
        _ payload: String, member: String, job: Job, now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, TicketStatus?) {
        let (result, outcome) = try await grantOutcome(payload, member: member, job: job, now: now)
        return (result, outcome?.status)
    }

    /// The grant step, answering what it set on the job's ticket (a part's outcome goes on to its
    /// client's ticket: `finishPart`, then `acknowledge`). A purchase under a daily cap first
    /// reserves its place in the user's window (`reserve_daily_grant`, the user's slot); the job
    /// then stays in flight through the grant until each unit that did not end granted has given
    /// its place back (`release_daily_grant`), and is acked last (`acknowledge_job`). Every step
    /// is safe to repeat: a crash between them redoes them and grants nothing twice.
    ///
    /// `tokenTickets`: Set App Account Token is on, its errands' tickets living this long; the
    /// user's bound token is read first (its own slot) for a job with a purchase that has none.
    public func grantOutcome(
        _ payload: String, member: String, job: Job, tokenTickets: Duration? = nil, now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, GrantOutcome?) {
        // The refund limit counts the user's refunds in every bucket: read first (a refund that
        // lands meanwhile is one that came just after this grant).
        let refunds = job.refundLimit == nil ? nil : try await refundCount(of: job.userID)
        let capped = (job.purchases ?? []).filter { $0.dailyLimit != nil && $0.outcome == .pending && $0.unit != nil }
        var places: [String: Bool] = [:]
        for purchase in capped {
            guard let unit = purchase.unit, let limit = purchase.dailyLimit else { continue }
            places[unit] = try await run(ReserveDailyGrant(
                keys, user: job.userID, product: purchase.productID, unit: unit, limit: limit, now: now))
        }
        let shared = try await appleAccountsShared(by: job)
        var tokenSetting: AccountTokenSetting?
        if let tokenTickets, Self.mayNeedAccountToken(job), let token = try await accountToken(ofUser: job.userID) {
            tokenSetting = AccountTokenSetting(token: token, ticketTTL: tokenTickets)
        }
        let keep = !capped.isEmpty
        let (result, outcome) = try await run(
            GrantPurchases(keys, member: member, taken: payload, job: job, refunds: refunds, places: places, shared: shared,
                keep: keep, recheck: recheck, accountToken: tokenSetting, now: now),
            replicated: true)
        // A job another worker holds now keeps its places: that worker's grant counts on them.
        guard result != .leaseLost else { return (result, outcome) }
        let kept = outcome?.keptPlaces ?? []
        for purchase in capped where places[purchase.unit ?? ""] == true && !kept.contains(purchase.unit ?? "") {
            _ = try await run(ReleaseDailyGrant(keys, user: job.userID, product: purchase.productID, unit: purchase.unit ?? ""))
        }
        if result == .moved, let outcome { try await bindAccountTokens(of: job, granted: outcome) }
        guard result == .moved, keep, job.part == nil else { return (result, outcome) }
        return (try await acknowledge(payload, member: member, ownTicket: job.ownTicket), outcome)
    }

    /// A job with a purchase to claim whose transaction carries no app account token (and is not
    /// a family member's): only such a job reads its user's token.
    static func mayNeedAccountToken(_ job: Job) -> Bool {
        let claimed = Set((job.purchases ?? []).filter { $0.isClaimed && $0.unit != nil }.map(\.transactionID))
        return (job.receipt?.transactions ?? []).contains {
            claimed.contains($0.transactionID) && $0.appAccountToken == nil && !$0.isFamilyShared
        }
    }

    /// Under `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT`: the transactions of this job's purchases (those
    /// it claimed) bought on an Apple Account on which the user came after the limit was full
    /// (`seat_apple_account`, once per account). The user's place is taken for good: a purchase
    /// held for it is still the user's buying on that account.
    func appleAccountsShared(by job: Job) async throws -> Set<String> {
        guard let limit = job.appleAccountLimit else { return [] }
        let claimed = Set((job.purchases ?? []).filter { $0.outcome == .pending && $0.unit != nil }.map(\.transactionID))
        var accounts: [String: [String]] = [:]
        for transaction in job.receipt?.transactions ?? [] where claimed.contains(transaction.transactionID) {
            if let account = transaction.appTransactionID, !account.isEmpty { accounts[account, default: []].append(transaction.transactionID) }
        }
        var shared: Set<String> = []
        for (account, transactions) in accounts.sorted(by: { $0.key < $1.key }) {
            if try await !seatAppleAccount(account, user: job.userID, limit: limit) { shared.formUnion(transactions) }
        }
        return shared
    }

    /// Binds the app account tokens of the purchases granted to the job's user to the user, where
    /// nobody holds them. Their keys are in no bucket, so this follows the grant step: a crash
    /// between them leaves a token unbound until the user's next grant carrying it; meanwhile a
    /// notification about a new purchase with that token waits as unclaimed, never granted blind.
    func bindAccountTokens(of job: Job, granted outcome: GrantOutcome) async throws {
        let granted = outcome.grantedTransactions
        let tokens = (job.receipt?.transactions ?? []).compactMap { tx in
            granted.contains(tx.transactionID) ? tx.appAccountToken?.lowercased() : nil
        }
        try await bindAccountTokens(tokens, to: job.userID)
    }

    /// `SET account-token:<token> user NX` for each token: the first user granted with it keeps it;
    /// and the user's own token (`user-token:<user>`), the first one bound to them, where the token
    /// is theirs. Each binding is written once and never changes, so repeating this changes nothing.
    ///
    /// One round trip: both bindings of every token go in one pipeline (their keys lie in
    /// different slots, so no one script can hold them). In the rare case a token turns out to be
    /// another user's while this call gave the user their reverse key, that key is taken back.
    @discardableResult
    public func bindAccountTokens(_ tokens: [String], to user: String) async throws -> [String: String] {
        guard !tokens.isEmpty else { return [:] }
        let sorted = Set(tokens).sorted()
        let replies = try await redis.pipeline(sorted.flatMap { token in
            [RedisCommand("SET", keys.accountToken(token), user, "NX", "GET"),
             RedisCommand("SET", keys.userAccountToken(user: user), token, "NX", "GET")]
        })
        var holders: [String: String] = [:]
        var takeBack = false
        for (index, token) in sorted.enumerated() {
            let (binding, reverse) = (replies[2 * index], replies[2 * index + 1])
            for reply in [binding, reverse] { if case .error(let message) = reply { throw RedisError.server(message) } }
            let holder = binding.string ?? user
            holders[token] = holder
            // This call wrote the user's reverse key with a token another user holds.
            if holder != user, reverse.string == nil { takeBack = true }
        }
        if takeBack {
            // Whichever of this call's tokens the user holds (if any) becomes their token instead.
            let theirs = sorted.first { holders[$0] == user }
            let reply = try await redis.send(
                theirs.map { RedisCommand("SET", keys.userAccountToken(user: user), $0) } ?? RedisCommand("DEL", keys.userAccountToken(user: user)))
            if case .error(let message) = reply { throw RedisError.server(message) }
        }
        return holders
    }

    /// The app account token bound to a user first (`user-token:<user>`), if any.
    public func accountToken(ofUser user: String) async throws -> String? {
        let reply = try await redis.send("GET", keys.userAccountToken(user: user))
        if case .error(let message) = reply { throw RedisError.server(message) }
        return reply.string
    }

    /// How many of a user's grants Apple refunded or revoked (less those reversed), every bucket's
    /// count added up: one round trip.
    public func refundCount(of user: String) async throws -> Int {
        try await redis.pipeline(keys.everyBucket.map { RedisCommand("GET", $0.refunds(user: user)) })
            .reduce(0) { $0 + ($1.string.flatMap { Int($0) } ?? 0) }
    }

    // MARK: parts (a receipt whose purchases lie in several buckets)

    /// Queues one part on its bucket (`claim_part`): `false` when an earlier call did.
    public func claimPart(_ part: Job, ttl: Duration, now: Int64 = currentTimeMs()) async throws -> Bool {
        guard let id = part.part else { preconditionFailure("a part's job names its part") }
        return try await run(ClaimPart(keys.ofTicket(id), part: part, ttl: ttl, now: now), replicated: true)
    }

    /// Acks the dedupe job of a split receipt and names its parts on its ticket (`split_job`).
    public func split(
        _ payload: String, member: String, ticket: String, parts: [String], now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        try await run(SplitJob(keys, member: member, taken: payload, ticket: ticket, parts: parts, now: now))
    }

    /// Records a part's outcome on its client's ticket (`finish_part`): `false` when the ticket is gone.
    public func finishPart(
        ticket: String, part: String, outcome: PartOutcome, now: Int64 = currentTimeMs()
    ) async throws -> Bool {
        try await run(FinishPart(keys, ticket: ticket, part: part, outcome: outcome, now: now), replicated: true)
    }

    /// Acks a job whose outcome is recorded elsewhere (`acknowledge_job`).
    public func acknowledge(_ payload: String, member: String, ownTicket: String) async throws -> TransitionResult {
        try await run(AcknowledgeJob(keys, member: member, taken: payload, ownTicket: ownTicket))
    }

    /// A re-check's answer as the subscription's new state: the status Apple gives, the latest
    /// period's end and transaction, credited to the record's owner.
    static func recheckChange(_ renewal: SubscriptionRenewal, receipt: VerifiedReceipt, purchases: [Purchase]) -> SubscriptionChange {
        // The latest period: the answer lists the earlier ones it fetched first.
        let latest = receipt.transactions.last { $0.originalTransactionID == renewal.originalTransactionID }
        let line = purchases.first { $0.transactionID == latest?.transactionID }
        var change = SubscriptionChange(
            originalTransactionID: renewal.originalTransactionID, productID: latest?.productID, status: renewal.status,
            expiresAt: latest?.expiresDateMs.flatMap { Int64($0) }, graceExpiresAt: renewal.graceExpiresAt, signedAt: renewal.signedAt,
            cause: "recheck", transactionID: latest?.transactionID, entitlements: line?.entitlements ?? [],
            environment: receipt.environment, autoRenew: renewal.autoRenew, source: "recheck")
        change.appTransactionID = latest?.appTransactionID
        return change
    }

    // MARK: notifications

    /// Stores a verified notification and queues it, or returns the ticket its UUID already has.
    /// It goes to the bucket of the purchase it is about (so its steps find the purchase's keys
    /// beside its own), or for one about no transaction, the bucket its UUID's hash picks.
    public func acceptNotification(_ job: Job, uuid: String, ttl: Duration) async throws -> (ticket: String, created: Bool) {
        let bucket = keys.layout.bucket(ofNotification: uuid, originalTransactionID: job.notification?.originalTransactionID)
        var job = job
        job.ticket = keys.layout.ticketID(job.ticket, inBucket: bucket)
        // The token's binding is read first (it lives in its own slot; a binding never changes).
        var tokenUser: String?
        if let token = job.notification?.appAccountToken?.lowercased() {
            tokenUser = try await redis.send("GET", keys.accountToken(token)).string
        }
        return try await run(AcceptNotification(keys.inBucket(bucket), job: job, uuid: uuid, ttl: ttl, tokenUser: tokenUser), replicated: true)
    }

    /// A transaction Apple signed, read from the Server API and verified, stored as the notification
    /// of `type` Apple would send about it (a refund found in the refund history, an extension Apple
    /// confirmed) through `accept_notification`: once per `uuid`, applied by the notify stage like
    /// Apple's own, its entries carrying `source`.
    public func acceptFound(
        _ transaction: JWSTransaction, as type: String, uuid: String, signedDate: Int64?, source: String, ttl: Duration
    ) async throws -> (ticket: String, created: Bool) {
        let payload = NotificationPayload(
            notificationType: type, notificationUUID: uuid, signedDate: signedDate,
            data: .init(bundleID: transaction.bundleID, environment: transaction.environment, signedTransactionInfo: nil))
        var job = Job(ticket: TicketID.make(), userID: "", receiptData: nil, productID: nil, transactionID: nil, enqueuedAt: currentTimeMs())
        job.stage = .notify
        job.source = source
        job.notification = VerifiedNotification(payload, transaction: transaction, renewal: nil)
        return try await acceptNotification(job, uuid: uuid, ttl: ttl)
    }

    /// The ticket a stored notification got (`notification:<uuid>`), looked for where the intake
    /// puts one about no purchase (a test notification) or, with `originalTransactionID`, about it.
    public func notificationTicket(uuid: String, originalTransactionID: String? = nil) async throws -> String? {
        let bucket = keys.layout.bucket(ofNotification: uuid, originalTransactionID: originalTransactionID)
        return try await redis.send("GET", keys.inBucket(bucket).notification(uuid: uuid)).string
    }

    /// REFUND / REVOKE of `unit`; returns the result (`revoked`, `already_revoked`, `refund_remembered`)
    /// when it moved. `subscription`: the period's subscription becomes `revoked` with it.
    public func revoke(
        _ payload: String, member: String, job: Job, unit: String, originalTransactionID: String, reason: String, type: String,
        subscription: SubscriptionChange? = nil, now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, String?) {
        try await run(RevokeGrant(
            keys, member: member, taken: payload, job: job, unit: unit, originalTransactionID: originalTransactionID, reason: reason,
            type: type, subscription: subscription, recheck: recheck, now: now))
    }

    /// REFUND_REVERSED of `unit`; returns the result (`reinstated`, `refund_forgotten`, `not_revoked`)
    /// when it moved. `subscription`: the period's subscription's status as the transaction now says.
    public func reinstate(
        _ payload: String, member: String, job: Job, unit: String, originalTransactionID: String,
        subscription: SubscriptionChange? = nil, now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, String?) {
        try await run(ReinstateGrant(
            keys, member: member, taken: payload, job: job, unit: unit, originalTransactionID: originalTransactionID,
            subscription: subscription, recheck: recheck, now: now))
    }

    /// A notification that moves a subscription without a grant: applied to its record in
    /// signed-time order, kept on its history; returns what applying it did (`applied`, `stale`,
    /// `unknown_subscription`) when it moved.
    public func applySubscriptionNotification(
        _ payload: String, member: String, job: Job, change: SubscriptionChange, entry: String, event: [String: String]? = nil,
        now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, String?) {
        try await run(ApplySubscriptionNotification(
            keys, member: member, taken: payload, job: job, change: change, entry: entry, event: event, recheck: recheck, now: now))
    }

    /// Where `record_notification` keeps an entry.
    public enum NotificationRecord: Sendable {
        /// On the original transaction's list (newest first).
        case history(originalTransactionID: String)
        /// In its bucket's `unclaimed`, under the transaction id, until a user submits it.
        case unclaimed(transactionID: String, originalTransactionID: String)
        /// Nowhere: only the ticket is finished.
        case nothing
    }

    public func recordNotification(
        _ payload: String, member: String, job: Job, result: String, entry: String, in record: NotificationRecord,
        event: [String: String]? = nil, users: [String]? = nil, now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        try await run(RecordNotification(
            keys, member: member, taken: payload, job: job, result: result, entry: entry, in: record, event: event, users: users,
            now: now))
    }

    /// The user an app account token or an original transaction belongs to, token first.
    public func account(appAccountToken: String?, originalTransactionID: String) async throws -> String? {
        if let token = appAccountToken?.lowercased(), let user = try await redis.send("GET", keys.accountToken(token)).string {
            return user
        }
        return try await redis.send("GET", keys.owner(originalTransactionID: originalTransactionID)).string
    }

    /// The users the app account tokens are bound to (lowercase tokens; an unbound one is absent):
    /// one GET each, since on a cluster each token's key lies in a slot of its own.
    public func owners(ofAccountTokens tokens: Set<String>) async throws -> [String: String] {
        var owners: [String: String] = [:]
        for token in tokens {
            if let user = try await redis.send("GET", keys.accountToken(token.lowercased())).string { owners[token.lowercased()] = user }
        }
        return owners
    }

    /// Binds an app account token to a user unless it is bound already; returns the user it is bound to.
    public func bindAccountToken(_ token: String, to user: String) async throws -> String {
        let token = token.lowercased()
        return try await bindAccountTokens([token], to: user)[token] ?? user
    }

    // MARK: housekeeping

    /// Moves the retries due by Redis's clock (`now`: a test's pinned time) back onto their queues.
    @discardableResult
    public func promoteDueRetries(now: Int64? = nil, limit: Int = 500) async throws -> Int {
        try await run(PromoteDueRetries(keys, now: now, limit: limit))
    }

    public struct ReapResult: Sendable, Equatable {
        /// `false` when another worker held the reaper lock.
        public var ran: Bool
        public var workers: Int
        public var returned: Int
        public var deadLettered: Int

        public init(ran: Bool, workers: Int, returned: Int, deadLettered: Int) {
            self.ran = ran
            self.workers = workers
            self.returned = returned
            self.deadLettered = deadLettered
        }
    }

    /// `forgetAfter`: how long a silent worker stays in `iap:workers` (reaped every round) so that
    /// a job its last BLMOVE delivers late is still returned; by default twice the lease. Leases
    /// are read against Redis's clock, as heartbeats are written (`now`: a test's pinned time).
    public func reapExpiredWorkers(
        reaper: String, lease: Duration, maxRedeliveries: Int, lock: Duration = .seconds(1), forgetAfter: Duration? = nil,
        now: Int64? = nil
    ) async throws -> ReapResult {
        try await run(ReapExpiredWorkers(
            keys, reaper: reaper, lease: lease, maxRedeliveries: maxRedeliveries, lock: lock, forgetAfter: forgetAfter ?? lease * 2,
            now: now))
    }

    /// The jobs a worker's in-flight list holds, oldest first.
    public func inflightJobs(member: String) async throws -> [String] {
        (try await redis.send("LRANGE", keys.inflight(member: member), "0", "-1").array ?? []).compactMap(\.string).reversed()
    }

    @discardableResult
    public func requeueInflight(member: String, stage: Stage) async throws -> Int {
        try await run(RequeueInflight(keys, member: member, stage: stage))
    }

    // MARK: operators

    /// The dead letters of every bucket (each bucket's newest first), at most `limit`.
    public func deadLetters(limit: Int) async throws -> [String] {
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
    public func replay(entry: String, ttl: Duration, now: Int64 = currentTimeMs()) async throws -> Bool {
        let letter = try DeadLetter.decode(entry)
        var job = try Job.decode(letter.job)
        job.attempts = 0
        for bucket in keys.everyBucket {
            if try await run(ReplayDeadLetter(bucket, entry: entry, job: job, ttl: ttl, now: now)) { return true }
        }
        return false
    }

    /// Deletes every bucket's dead letters; returns how many there were.
    public func purgeDeadLetters() async throws -> Int {
        var purged = 0
        for bucket in keys.everyBucket {
            let replies = try await redis.pipeline([RedisCommand("LLEN", bucket.dead), RedisCommand("DEL", bucket.dead)])
            purged += Int(replies.first?.int ?? 0)
        }
        return purged
    }
}
