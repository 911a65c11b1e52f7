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

    // MARK: intake

    /// Stores the ticket and queues the job, or returns the ticket this user's receipt already has
    /// (which no rate limit counts). Throws `RateLimitExceeded` when a new submission finds a limit
    /// of `limits` spent in the second of `job.enqueuedAt`.
    public func submit(
        _ job: Job, receiptDigest: String, ttlSeconds: Int, limits: SubmissionLimits = .none
    ) async throws -> (ticket: String, created: Bool) {
        let second = job.enqueuedAt / 1000
        let reply = try await redis.run(
            PipelineScripts.submitReceipt,
            keys: [
                keys.receipt(digest: receiptDigest), keys.ticket(job.ticket), keys.queue(.verify),
                keys.rateWindow(clientKey: limits.clientKey ?? "", second: second),
                keys.rateWindow(user: job.userID, second: second),
            ],
            arguments: [
                job.ticket, job.encoded(), String(job.enqueuedAt), String(ttlSeconds), job.userID,
                job.productID ?? "", job.transactionID ?? "", keys.scriptPrefix, keys.results,
                String(limits.clientKey == nil ? 0 : limits.perKey), String(limits.perUser),
            ],
            replicated: replication
        )
        guard let items = reply.array, items.count == 2, let created = items[0].int, let ticket = items[1].string else {
            throw RedisError.unexpectedReply("submit_receipt: \(reply)")
        }
        if created == -1 { throw RateLimitExceeded(scope: ticket == "key" ? .clientKey : .user) }
        return (ticket, created == 1)
    }

    public func ticket(_ id: String) async throws -> Ticket? {
        let hash = try await redis.send("HGETALL", keys.ticket(id)).stringDictionary
        return Ticket(id: id, hash: hash)
    }

    // MARK: workers

    /// Blocks until a job is in `stage`'s queue and moves it into the worker's in-flight list.
    public func take(from stage: Stage, member: String, on connection: RedisConnection, blockMs: Int) async throws -> String? {
        let fraction = String(blockMs % 1000)
        let seconds = "\(blockMs / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
        let reply = try await connection.execute(
            RedisCommand("BLMOVE", keys.queue(stage), keys.inflight(member: member), "RIGHT", "LEFT", seconds),
            blockingMs: blockMs)
        if case .error(let message) = reply { throw RedisError.server(message) }
        return reply.string
    }

    public func heartbeat(member: String, now: Int64 = currentTimeMs()) async throws {
        try await redis.send("ZADD", keys.workers, String(now), member)
    }

    /// Moves up to `max` jobs from `stage`'s queue into the worker's in-flight list without
    /// blocking; none when the queue is empty.
    public func takeJobs(from stage: Stage, member: String, max: Int) async throws -> [String] {
        let reply = try await redis.run(
            PipelineScripts.takeJobs, keys: [keys.queue(stage), keys.inflight(member: member)],
            arguments: [TakeJobsArguments(max: String(max)).argument])
        return (reply.array ?? []).compactMap(\.string)
    }

    /// Shows `verifying` on the tickets; returns those whose hash is gone.
    public func markVerifying(tickets: [String], now: Int64 = currentTimeMs()) async throws -> Set<String> {
        if tickets.isEmpty { return [] }
        let arguments = MarkVerifyingArguments(now: String(now), channel: keys.results, tickets: tickets)
        let reply = try await redis.run(
            PipelineScripts.markVerifying, keys: tickets.map(keys.ticket),
            arguments: [arguments.argument])
        let found = (reply.array ?? []).map { $0.int ?? 0 }
        guard found.count == tickets.count else { throw RedisError.unexpectedReply("mark_verifying: \(reply)") }
        return Set(zip(tickets, found).filter { $0.1 == -1 }.map(\.0))
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
        let layout = ForwardJobsLayout(
            inflight: keys.inflight(member: member), jobs: jobs.map { (keys.queue($0.next.stage), keys.ticket($0.next.ticket)) })
        let arguments = ForwardJobsArguments(jobs: jobs.map {
            ForwardedJob(taken: $0.payload, next: $0.next.encoded(), fields: $0.ticketFields.flatMap { [$0.0, $0.1] })
        })
        let reply = try await redis.run(
            PipelineScripts.forwardJob, keys: layout.keys, arguments: [arguments.argument])
        return try TransitionResult.each(of: reply, expected: jobs.count, script: "forward_job")
    }

    public func scheduleRetry(
        _ payload: String, member: String, next: Job, dueMs: Int64, lastError: String, now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        let reply = try await redis.run(
            PipelineScripts.scheduleRetry,
            keys: [keys.inflight(member: member), keys.retry, keys.ticket(next.ticket)],
            arguments: [
                payload, next.encoded(), String(dueMs), String(now), String(next.attempts), lastError, keys.results,
                next.ticket,
            ]
        )
        return TransitionResult(reply.int)
    }

    /// `ticket` is `nil` for a job that could not be decoded.
    public func deadLetter(
        _ payload: String, member: String, stage: Stage, ticket: String?, reason: String, error: String,
        attempts: Int, now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        let entry = DeadLetter(
            job: payload, stage: stage.rawValue, reason: reason, error: error, attempts: attempts, at: now, ticket: ticket)
        let reply = try await redis.run(
            PipelineScripts.deadLetterJob,
            keys: [keys.inflight(member: member), keys.dead, keys.ticket(ticket ?? "")],
            arguments: [
                payload, entry.encoded(), reason, String(attempts), String(now), keys.results, ticket ?? "", error,
            ]
        )
        return TransitionResult(reply.int)
    }

    /// `lastError` is the precise cause behind `reason` (kept on the ticket, never a secret).
    public func finish(
        _ payload: String, member: String, ticket: String, status: TicketStatus, reason: String, attempts: Int,
        environment: String?, lastError: String? = nil, now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        let arguments = FinishTicketArguments(
            status: status.rawValue, reason: reason, attempts: String(attempts), now: String(now), channel: keys.results, ticket: ticket,
            environment: environment, lastError: lastError)
        let reply = try await redis.run(
            PipelineScripts.finishTicket,
            keys: [keys.inflight(member: member), keys.ticket(ticket)],
            arguments: [payload, arguments.argument]
        )
        return TransitionResult(reply.int)
    }

    public func claimAndForward(_ payload: String, member: String, to next: Job) async throws -> TransitionResult {
        try await claimAndForward([(payload, next)], member: member)[0]
    }

    /// Claims and forwards several of a worker's dedupe jobs in one script call; one result per job.
    public func claimAndForward(_ jobs: [(payload: String, next: Job)], member: String) async throws -> [TransitionResult] {
        let claims = jobs.map { job in
            (job.next.purchases ?? []).filter(\.isClaimed).compactMap(\.unit).map { keys.claim(unit: $0) }
        }
        let layout = ClaimPurchasesLayout(
            inflight: keys.inflight(member: member), grantQueue: keys.queue(.grant),
            jobs: zip(jobs, claims).map { (keys.ticket($0.0.next.ticket), $0.1) })
        let arguments = ClaimPurchasesArguments(jobs: zip(jobs, claims).map { job, claims in
            ClaimedJob(taken: job.payload, next: job.next.encoded(), ticket: job.next.ticket, units: String(claims.count))
        })
        let reply = try await redis.run(
            PipelineScripts.claimPurchases, keys: layout.keys, arguments: [arguments.argument], replicated: replication)
        return try TransitionResult.each(of: reply, expected: jobs.count, script: "claim_purchases")
    }

    public func grant(
        _ payload: String, member: String, job: Job, now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, TicketStatus?) {
        let purchases = job.purchases ?? []
        var grantKeys: [String] = []
        var lines: [GrantPurchasesArguments.Line] = []
        let tokens = Dictionary(
            (job.receipt?.transactions ?? []).compactMap { tx in tx.appAccountToken.map { (tx.transactionID, $0.lowercased()) } },
            uniquingKeysWith: { first, _ in first })
        for purchase in purchases {
            if purchase.isClaimed, let unit = purchase.unit {
                grantKeys += [keys.claim(unit: unit), keys.grant(unit: unit)]
            }
            // A pending or held purchase without a unit cannot be claimed: it is rejected, never granted blind.
            let outcome = purchase.isClaimed && purchase.unit == nil ? PurchaseOutcome.rejected : purchase.outcome
            let reason = outcome == purchase.outcome ? purchase.reason : nil
            lines.append(.init(
                transactionID: purchase.transactionID, originalTransactionID: purchase.originalTransactionID,
                productID: purchase.productID, quantity: String(purchase.quantity), unit: purchase.unit,
                outcome: outcome.rawValue, reason: outcome == .rejected ? reason ?? ReasonCode.noGrantUnit : reason,
                appAccountToken: tokens[purchase.transactionID], currency: purchase.currency,
                dailyLimit: purchase.dailyLimit.map(String.init), kind: purchase.kind,
                entitlements: purchase.entitlements.flatMap { $0.isEmpty ? nil : $0.joined(separator: ",") },
                expiresAt: purchase.expiresAt.map(String.init), signedAt: purchase.signedAt.map(String.init)))
        }
        let subscription = job.receipt.flatMap { receipt in receipt.renewal.map { Self.recheckChange($0, receipt: receipt, purchases: purchases) } }
        let arguments = GrantPurchasesArguments(
            ticket: job.ticket, now: String(now), channel: keys.results, userID: job.userID,
            environment: job.receipt?.environment ?? "", source: job.source ?? "client", prefix: keys.scriptPrefix,
            refundLimit: job.refundLimit.map(String.init), sharing: job.sharing?.rawValue, purchases: lines,
            recheck: recheck, subscription: subscription, receipt: job.subscriptionReceipt)
        let reply = try await redis.run(
            PipelineScripts.grantPurchases,
            keys: [keys.inflight(member: member), keys.ticket(job.ticket), keys.fulfilment] + grantKeys,
            arguments: [payload, arguments.argument],
            replicated: replication
        )
        let items = reply.array ?? []
        let result = TransitionResult(items.first?.int)
        return (result, items.count > 1 ? items[1].string.flatMap(TicketStatus.init(rawValue:)) : nil)
    }

    /// A re-check's answer as the subscription's new state: the status Apple gives, the latest
    /// period's end and transaction, credited to the record's owner.
    static func recheckChange(_ renewal: SubscriptionRenewal, receipt: VerifiedReceipt, purchases: [Purchase]) -> SubscriptionChange {
        // The latest period: the answer lists the earlier ones it fetched first.
        let latest = receipt.transactions.last { $0.originalTransactionID == renewal.originalTransactionID }
        let line = purchases.first { $0.transactionID == latest?.transactionID }
        return SubscriptionChange(
            originalTransactionID: renewal.originalTransactionID, productID: latest?.productID, status: renewal.status,
            expiresAt: latest?.expiresDateMs.flatMap { Int64($0) }, graceExpiresAt: renewal.graceExpiresAt, signedAt: renewal.signedAt,
            cause: "recheck", transactionID: latest?.transactionID, entitlements: line?.entitlements ?? [],
            environment: receipt.environment, autoRenew: renewal.autoRenew, source: "recheck")
    }

    // MARK: notifications

    /// Stores a verified notification and queues it, or returns the ticket its UUID already has.
    public func acceptNotification(_ job: Job, uuid: String, ttlSeconds: Int) async throws -> (ticket: String, created: Bool) {
        let arguments: [String: String] = [
            "ticket": job.ticket, "now": String(job.enqueuedAt), "ttl": String(ttlSeconds),
            "retention": String(max(Int(RedisKeys.notificationRetention / .seconds(1)), ttlSeconds)), "channel": keys.results,
            "type": job.notification?.type ?? "",
        ]
        let reply = try await redis.run(
            PipelineScripts.acceptNotification,
            keys: [keys.notification(uuid: uuid), keys.ticket(job.ticket), keys.queue(.notify)],
            arguments: [job.encoded(), arguments.argument], replicated: replication)
        guard let items = reply.array, items.count == 2, let created = items[0].int, let ticket = items[1].string else {
            throw RedisError.unexpectedReply("accept_notification: \(reply)")
        }
        return (ticket, created == 1)
    }

    /// REFUND / REVOKE of `unit`; returns the result (`revoked`, `already_revoked`, `refund_remembered`)
    /// when it moved. `subscription`: the period's subscription becomes `revoked` with it.
    public func revoke(
        _ payload: String, member: String, job: Job, unit: String, reason: String, type: String,
        subscription: SubscriptionChange? = nil, now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, String?) {
        let arguments: JSONValue = .members([
            "ticket": .string(job.ticket), "now": .string(String(now)), "channel": .string(keys.results),
            "notification": .string(job.notification?.uuid ?? ""), "revocation_reason": .string(reason),
            "revocation_type": .string(type), "prefix": .string(keys.scriptPrefix), "subscription": subscription?.json,
            "recheck": recheck?.json,
        ])
        return try await notificationStep(PipelineScripts.revokeGrant, payload, member: member, job: job, unit: unit, arguments)
    }

    /// REFUND_REVERSED of `unit`; returns the result (`reinstated`, `refund_forgotten`, `not_revoked`)
    /// when it moved. `subscription`: the period's subscription's status as the transaction now says.
    public func reinstate(
        _ payload: String, member: String, job: Job, unit: String, subscription: SubscriptionChange? = nil,
        now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, String?) {
        let arguments: JSONValue = .members([
            "ticket": .string(job.ticket), "now": .string(String(now)), "channel": .string(keys.results),
            "notification": .string(job.notification?.uuid ?? ""), "prefix": .string(keys.scriptPrefix),
            "subscription": subscription?.json, "recheck": recheck?.json,
        ])
        return try await notificationStep(PipelineScripts.reinstateGrant, payload, member: member, job: job, unit: unit, arguments)
    }

    private func notificationStep(
        _ script: RedisScript, _ payload: String, member: String, job: Job, unit: String, _ arguments: JSONValue
    ) async throws -> (TransitionResult, String?) {
        let reply = try await redis.run(
            script,
            keys: [keys.inflight(member: member), keys.ticket(job.ticket), keys.grant(unit: unit), keys.refunded(unit: unit), keys.fulfilment],
            arguments: [payload, arguments.canonicalText])
        let items = reply.array ?? []
        return (TransitionResult(items.first?.int), items.count > 1 ? items[1].string : nil)
    }

    /// A notification that moves a subscription without a grant: applied to its record in
    /// signed-time order, kept on its history; returns what applying it did (`applied`, `stale`,
    /// `unknown_subscription`) when it moved.
    public func applySubscriptionNotification(
        _ payload: String, member: String, job: Job, change: SubscriptionChange, entry: String, now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, String?) {
        let arguments = ApplySubscriptionNotificationArguments(
            ticket: job.ticket, now: String(now), channel: keys.results, prefix: keys.scriptPrefix, entry: entry, keep: "100",
            subscription: change, recheck: recheck)
        let reply = try await redis.run(
            PipelineScripts.applySubscriptionNotification,
            keys: [
                keys.inflight(member: member), keys.ticket(job.ticket),
                keys.notifications(originalTransactionID: change.originalTransactionID), keys.fulfilment,
            ],
            arguments: [payload, arguments.argument])
        let items = reply.array ?? []
        return (TransitionResult(items.first?.int), items.count > 1 ? items[1].string : nil)
    }

    /// Where `record_notification` keeps an entry.
    public enum NotificationRecord: Sendable {
        /// On the original transaction's list (newest first).
        case history(originalTransactionID: String)
        /// In `unclaimed`, under the transaction id, until a user submits it.
        case unclaimed(transactionID: String)
        /// Nowhere: only the ticket is finished.
        case nothing
    }

    public func recordNotification(
        _ payload: String, member: String, job: Job, result: String, entry: String, in record: NotificationRecord,
        now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        var recordKeys = [keys.inflight(member: member), keys.ticket(job.ticket)]
        var arguments = ["ticket": job.ticket, "now": String(now), "channel": keys.results, "result": result, "entry": entry, "keep": "100"]
        switch record {
        case .history(let original): recordKeys.append(keys.notifications(originalTransactionID: original))
        case .unclaimed(let transactionID):
            recordKeys.append(keys.unclaimed)
            arguments["transaction_id"] = transactionID
        case .nothing: break
        }
        let reply = try await redis.run(
            PipelineScripts.recordNotification, keys: recordKeys,
            arguments: [payload, arguments.argument])
        return TransitionResult(reply.int)
    }

    /// The user an app account token or an original transaction belongs to, token first.
    public func account(appAccountToken: String?, originalTransactionID: String) async throws -> String? {
        if let token = appAccountToken?.lowercased(), let user = try await redis.send("GET", keys.accountToken(token)).string {
            return user
        }
        return try await redis.send("GET", keys.owner(originalTransactionID: originalTransactionID)).string
    }

    /// Binds an app account token to a user unless it is bound already; returns the user it is bound to.
    public func bindAccountToken(_ token: String, to user: String) async throws -> String {
        let reply = try await redis.send("SET", keys.accountToken(token.lowercased()), user, "NX", "GET")
        if case .error(let message) = reply { throw RedisError.server(message) }
        return reply.string ?? user
    }

    // MARK: housekeeping

    @discardableResult
    public func promoteDueRetries(now: Int64 = currentTimeMs(), limit: Int = 500) async throws -> Int {
        let reply = try await redis.run(
            PipelineScripts.promoteDueRetries, keys: [keys.retry, keys.dead],
            arguments: [keys.scriptPrefix, String(now), String(limit)])
        return Int(reply.int ?? 0)
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

    /// `forgetAfterMs`: how long a silent worker stays in `iap:workers` (reaped every round) so that
    /// a job its last BLMOVE delivers late is still returned; by default twice the lease.
    public func reapExpiredWorkers(
        reaper: String, leaseMs: Int, maxRedeliveries: Int, lockMs: Int = 1000, forgetAfterMs: Int? = nil,
        now: Int64 = currentTimeMs()
    ) async throws -> ReapResult {
        let reply = try await redis.run(
            PipelineScripts.reapExpiredWorkers, keys: [keys.workers, keys.dead, keys.reaperLock],
            arguments: [
                keys.scriptPrefix, String(now), String(leaseMs), String(maxRedeliveries), String(lockMs), reaper,
                keys.results, String(forgetAfterMs ?? 2 * leaseMs),
            ])
        let counts = (reply.array ?? []).map { Int($0.int ?? 0) }
        guard counts.count == 3 else { throw RedisError.unexpectedReply("reap_expired_workers: \(reply)") }
        return ReapResult(ran: counts[0] >= 0, workers: max(counts[0], 0), returned: counts[1], deadLettered: counts[2])
    }

    /// The jobs a worker's in-flight list holds, oldest first.
    public func inflightJobs(member: String) async throws -> [String] {
        (try await redis.send("LRANGE", keys.inflight(member: member), "0", "-1").array ?? []).compactMap(\.string).reversed()
    }

    @discardableResult
    public func requeueInflight(member: String, stage: Stage) async throws -> Int {
        let reply = try await redis.run(
            PipelineScripts.requeueInflight, keys: [keys.inflight(member: member), keys.queue(stage), keys.workers],
            arguments: [member])
        return Int(reply.int ?? 0)
    }

    // MARK: operators

    public func deadLetters(limit: Int) async throws -> [String] {
        let reply = try await redis.send("LRANGE", keys.dead, "0", String(max(limit, 1) - 1))
        return (reply.array ?? []).compactMap(\.string)
    }

    /// Queues a dead letter's job again, attempts reset. Returns `false` when the entry is gone
    /// (someone else replayed or purged it); throws when the entry holds no job to replay.
    public func replay(entry: String, ttlSeconds: Int, now: Int64 = currentTimeMs()) async throws -> Bool {
        let letter = try DeadLetter.decode(entry)
        var job = try Job.decode(letter.job)
        job.attempts = 0
        let reply = try await redis.run(
            PipelineScripts.replayDeadLetter,
            keys: [keys.dead, keys.queue(job.stage), keys.ticket(job.ticket)],
            arguments: [entry, job.encoded(), String(now), keys.results, job.ticket, String(ttlSeconds)])
        return reply.int == 1
    }
}
