import RedisClient

extension PipelineStore {
    /// Records whether `user` consented to consumption information being sent to Apple.
    public func setConsent(user: String, consented: Bool) async throws {
        let reply = try await redis.send("SET", keys.consent(user: user), consented ? "1" : "0")
        if case .error(let message) = reply { throw RedisError.server(message) }
    }

    /// What the pipeline knows about a purchase Apple asks consumption information for: whose it
    /// is (the grant's user, else the owner of its original transaction), whether it was granted
    /// and not taken back, and whether that user consented.
    public struct ConsumptionFacts: Sendable, Equatable {
        public var user: String?
        public var delivered: Bool
        public var consented: Bool
    }

    public func consumptionFacts(unit: String, originalTransactionID: String) async throws -> ConsumptionFacts {
        let replies = try await redis.pipeline([
            RedisCommand("HMGET", keys.grant(unit: unit, originalTransactionID: originalTransactionID), "user_id", "revoked_at"),
            RedisCommand("GET", keys.owner(originalTransactionID: originalTransactionID)),
        ])
        let grant = replies[0].array ?? []
        let grantedTo = grant.first?.string
        let revoked = grant.count > 1 && grant[1].string != nil
        guard let user = grantedTo ?? replies[1].string else {
            return ConsumptionFacts(user: nil, delivered: false, consented: false)
        }
        let consent = try await redis.send("GET", keys.consent(user: user)).string
        return ConsumptionFacts(user: user, delivered: grantedTo != nil && !revoked, consented: consent == "1")
    }
}
