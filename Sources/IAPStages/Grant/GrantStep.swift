import PipelineCore
import RedisClient

/// The grant step (`grant_purchases`) and what it reads first: the user's refunds, daily places,
/// the Apple Accounts a purchase shares, the bound token.
extension PipelineStore {
    package func grant(
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
    /// `finishTickets`: Finish Transaction is on, each granted consumable's errand ticket living this long.
    /// `batching`: where the step itself goes (a worker's batcher: `runBatch`); `nil`: called alone.
    /// `readingToken`: where the user's token is read (a worker's batcher: `accountTokens(ofUsers:)`);
    /// `nil`: read alone.
    package func grantOutcome(
        _ payload: String, member: String, job: Job, tokenTickets: Duration? = nil, finishTickets: Duration? = nil,
        batching: (@Sendable (GrantPurchases) async throws -> (TransitionResult, GrantOutcome?))? = nil,
        readingToken: (@Sendable (String) async throws -> String?)? = nil,
        now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, GrantOutcome?) {
        // The refund limit counts the user's refunds in every bucket: read first (a refund that
        // lands meanwhile is one that came just after this grant).
        let work = job.grantWork
        let refunds = work.refundLimit == nil ? nil : try await refundCount(of: job.userID)
        let capped = work.purchases.filter { $0.dailyLimit != nil && $0.outcome == .pending && $0.unit != nil }
        var places: [String: Bool] = [:]
        for purchase in capped {
            guard let unit = purchase.unit, let limit = purchase.dailyLimit else { continue }
            places[unit] = try await run(ReserveDailyGrant(
                keys, user: job.userID, product: purchase.productID, unit: unit, limit: limit, now: now))
        }
        let shared = try await appleAccountsShared(by: job, work: work)
        var tokenSetting: AccountTokenSetting?
        if let tokenTickets, Self.mayNeedAccountToken(work) {
            let token = if let readingToken { try await readingToken(job.userID) } else { try await accountToken(ofUser: job.userID) }
            tokenSetting = token.map { AccountTokenSetting(token: $0, ticketTTL: tokenTickets) }
        }
        let keep = !capped.isEmpty
        let step = GrantPurchases(keys, member: member, taken: payload, job: job, work: work, refunds: refunds, places: places,
            shared: shared, keep: keep, recheck: recheck, accountToken: tokenSetting, finishTickets: finishTickets, now: now)
        let (result, outcome) = if let batching { try await batching(step) } else { try await run(step, replicated: true) }
        // A job another worker holds now keeps its places: that worker's grant counts on them.
        guard result != .leaseLost else { return (result, outcome) }
        let kept = outcome?.keptPlaces ?? []
        for purchase in capped where places[purchase.unit ?? ""] == true && !kept.contains(purchase.unit ?? "") {
            _ = try await run(ReleaseDailyGrant(keys, user: job.userID, product: purchase.productID, unit: purchase.unit ?? ""))
        }
        if result == .moved, let outcome { try await bindAccountTokens(of: job, work: work, granted: outcome) }
        guard result == .moved, keep, job.part == nil else { return (result, outcome) }
        return (try await acknowledge(payload, member: member, ownTicket: job.ownTicket), outcome)
    }

    /// A job with a purchase to claim whose transaction carries no app account token (and is not
    /// a family member's): only such a job reads its user's token.
    static func mayNeedAccountToken(_ work: Job.Claimed) -> Bool {
        work.purchases.contains { purchase in
            guard purchase.isClaimed, purchase.unit != nil, let transaction = purchase.transaction else { return false }
            return transaction.appAccountToken == nil && !transaction.isFamilyShared
        }
    }

    /// Every Apple Account this job's purchases (those it claimed) name seats the user
    /// (`seat_apple_account`, once per account and user): what finds the one user of an account
    /// for a purchase Apple reports without a token, and for `RESCIND_CONSENT`. Under
    /// `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT`, returns the transactions bought on an account on which
    /// the user came after the limit was full. The user's place is taken for good: a purchase held
    /// for it is still the user's buying on that account.
    func appleAccountsShared(by job: Job, work: Job.Claimed) async throws -> Set<String> {
        var accounts: [String: [String]] = [:]
        for purchase in work.purchases where purchase.outcome == .pending && purchase.unit != nil {
            if let account = purchase.transaction?.appTransactionID, !account.isEmpty {
                accounts[account, default: []].append(purchase.transactionID)
            }
        }
        var shared: Set<String> = []
        for (account, transactions) in accounts.sorted(by: { $0.key < $1.key }) {
            let within = try await seatAppleAccount(account, user: job.userID, limit: work.appleAccountLimit)
            if work.appleAccountLimit != nil, !within { shared.formUnion(transactions) }
        }
        return shared
    }

    /// Binds the app account tokens of the purchases granted to the job's user to the user, where
    /// nobody holds them. Their keys are in no bucket, so this follows the grant step: a crash
    /// between them leaves a token unbound until the user's next grant carrying it; meanwhile a
    /// notification about a new purchase with that token waits as unclaimed, never granted blind.
    func bindAccountTokens(of job: Job, work: Job.Claimed, granted outcome: GrantOutcome) async throws {
        let carrying = work.purchases.filter { $0.transaction?.appAccountToken != nil }
        guard !carrying.isEmpty else { return }  // the outcome's transactions are read only when a token may bind
        let granted = outcome.grantedTransactions
        let tokens = carrying.compactMap { purchase in
            granted.contains(purchase.transactionID) ? purchase.transaction?.appAccountToken?.lowercased() : nil
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
    package func bindAccountTokens(_ tokens: [String], to user: String) async throws -> [String: String] {
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
    package func accountToken(ofUser user: String) async throws -> String? {
        try await accountTokens(ofUsers: [user])[0]
    }

    /// The tokens bound to each of `users` first, in order: one round trip on one server (the keys
    /// lie in no bucket: on a cluster the client sends each slot its part, all at once).
    package func accountTokens(ofUsers users: [String]) async throws -> [String?] {
        let replies = try await redis.pipeline(users.map { RedisCommand("GET", keys.userAccountToken(user: $0)) })
        return try replies.map { reply in
            if case .error(let message) = reply { throw RedisError.server(message) }
            return reply.string
        }
    }

    /// How many of a user's grants Apple refunded or revoked (less those reversed), every bucket's
    /// count added up, a prorated refund counting as its share (1 of 3 units: 0.33333): one round
    /// trip.
    package func refundCount(of user: String) async throws -> Double {
        let replies = try await redis.pipeline(keys.everyBucket.flatMap {
            [RedisCommand("GET", $0.refunds(user: user)), RedisCommand("GET", $0.refundsProrated(user: user))]
        })
        var whole = 0, prorated = 0
        for (index, reply) in replies.enumerated() {
            if case .error(let message) = reply { throw RedisError.server(message) }
            let count = reply.string.flatMap { Int($0) } ?? 0
            if index % 2 == 0 { whole += count } else { prorated += count }
        }
        return Double(whole) + Double(prorated) / 100_000
    }

    /// Records a part's outcome on its client's ticket (`finish_part`): `false` when the ticket is gone.
    package func finishPart(
        ticket: String, part: String, outcome: PartOutcome, now: Int64 = currentTimeMs()
    ) async throws -> Bool {
        try await run(FinishPart(keys, ticket: ticket, part: part, outcome: outcome, now: now), replicated: true)
    }
}
