import Logging
import PipelineCore
import RedisClient

extension PipelineStore {
    /// Gives `grant` to `user` (`grant_for_a_time`), once per its id.
    package func grantForATime(user: String, grant: TimedGrant, exactUntil: Bool = true) async throws -> GrantForATime.Outcome {
        try await run(GrantForATime(keys, user: user, grant: grant, exactUntil: exactUntil), replicated: true)
    }

    /// Takes one of `user`'s grants back before its end (`revoked`), or ends it at its end (`expired`).
    package func endTimedGrant(
        user: String, grantID: String, why: EndTimedGrant.Why, by: String = "", now: Int64 = currentTimeMs()
    ) async throws -> EndTimedGrant.Outcome {
        try await run(EndTimedGrant(keys, user: user, grantID: grantID, why: why, by: by, now: now), replicated: true)
    }

    /// Every grant for a time `user` was given, ended ones too, by grant id.
    package func timedGrants(of user: String) async throws -> [TimedGrant] {
        let reply = try await redis.send("HGETALL", keys.ofTimedGrants(user: user).timedGrants(user: user))
        if case .error(let message) = reply { throw RedisError.server(message) }
        return reply.stringDictionary.values.compactMap { try? TimedGrant(record: $0) }.sorted { $0.grantID < $1.grantID }
    }

    /// Ends the grants of this store's bucket whose end has come (at most `limit` a call), each in
    /// its own `end_timed_grant`: however many processes do this at once, each ends once. How many
    /// this call ended.
    package func endDueTimedGrants(limit: Int = 100, now: Int64 = currentTimeMs()) async throws -> Int {
        let due = try await redis.send("ZRANGEBYSCORE", keys.timedGrantEnds, "-inf", String(now), "LIMIT", "0", String(limit))
        if case .error(let message) = due { throw RedisError.server(message) }
        var ended = 0
        for member in due.array?.compactMap(\.string) ?? [] {
            guard let split = member.firstIndex(of: "\0") else {
                _ = try await redis.send("ZREM", keys.timedGrantEnds, member)  // never written so: not ours to keep
                continue
            }
            let user = String(member[..<split]), grant = String(member[member.index(after: split)...])
            if case .ended = try await endTimedGrant(user: user, grantID: grant, why: .expired, now: now) { ended += 1 }
        }
        return ended
    }
}
