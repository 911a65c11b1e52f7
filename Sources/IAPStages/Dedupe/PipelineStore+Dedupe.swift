import PipelineCore
import RedisClient

/// The dedupe stage's steps: an Apple Account's seats, the claims (`claim_purchases`), the parts
/// of a receipt whose purchases lie in several buckets.
extension PipelineStore {
    /// A user's place among the users of an Apple Account (`seat_apple_account`): whether it is
    /// within `limit` (`nil`: any number; the place is kept all the same).
    package func seatAppleAccount(_ appTransactionID: String, user: String, limit: Int?) async throws -> Bool {
        // The user's index first (its own slot on a cluster): a seat is never made that the
        // index misses; an index entry without its seat (a crash between) is the user's account anyway.
        try await redis.send("SADD", keys.userAppleAccounts(user: user), appTransactionID)
        return try await run(SeatAppleAccount(keys, appTransactionID: appTransactionID, user: user, limit: limit ?? Int(Int32.max)))
    }

    /// The Apple Accounts a user was seated on since the index was kept (`user-apple-accounts:`), sorted.
    package func appleAccounts(ofUser user: String) async throws -> [String] {
        (try await redis.send("SMEMBERS", keys.userAppleAccounts(user: user)).array ?? []).compactMap(\.string).sorted()
    }

    /// Whether `user` holds a seat on the Apple Account (its own hash says so: seats made before
    /// the user's index was kept count too).
    package func isSeated(_ user: String, onAppleAccount appTransactionID: String) async throws -> Bool {
        try await redis.send("HEXISTS", keys.appleAccount(appTransactionID), "u:\(user)").int == 1
    }

    /// The users who bought on, or bound, an Apple Account (`apple-account:<id>`), in the order
    /// they first did.
    package func appleAccountUsers(_ appTransactionID: String) async throws -> [String] {
        let reply = try await redis.send("HGETALL", keys.appleAccount(appTransactionID))
        if case .error(let message) = reply { throw RedisError.server(message) }
        let fields = reply.stringDictionary
        return fields.compactMap { name, place in name.hasPrefix("u:") ? (String(name.dropFirst(2)), Int(place) ?? .max) : nil }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.map(\.0)
    }

    package func claimAndForward(_ payload: String, member: String, to next: Job) async throws -> TransitionResult {
        try await claimAndForward([(payload, next)], member: member)[0]
    }

    /// Claims and forwards several of a worker's dedupe jobs in one script call; one result per job.
    package func claimAndForward(_ jobs: [(payload: String, next: Job)], member: String) async throws -> [TransitionResult] {
        try await run(ClaimPurchases(keys, member: member, jobs: jobs), replicated: true)
            .onePerItem(of: jobs.count, script: ClaimPurchases.name)
    }

    /// Queues one part on its bucket (`claim_part`): `false` when an earlier call did.
    package func claimPart(_ part: Job, ttl: Duration, now: Int64 = currentTimeMs()) async throws -> Bool {
        guard let id = part.part else { preconditionFailure("a part's job names its part") }
        return try await run(ClaimPart(keys.ofTicket(id), part: part, ttl: ttl, now: now), replicated: true)
    }

    /// Acks the dedupe job of a split receipt and names its parts on its ticket (`split_job`).
    package func split(
        _ payload: String, member: String, ticket: String, parts: [String], now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        try await run(SplitJob(keys, member: member, taken: payload, ticket: ticket, parts: parts, now: now))
    }
}
