import IAPStages
import PipelineCore
import RedisClient

extension PipelineStore {
    /// Where some users stand in a subscription group: none of them ever had one of its products,
    /// one had it and none is in it now, or one is in it now (active, or in its grace period).
    package enum GroupHistory: String, Sendable, Equatable {
        case never, lapsed, active
    }

    /// `users`' history in the subscription group made of `products`, from their subscription
    /// records (a refunded or revoked one counts as had): one round trip per user for their
    /// indexes, one for the records.
    package func groupHistory(users: [String], products: Set<String>, now: Int64 = currentTimeMs()) async throws -> GroupHistory {
        var originals: [String] = []
        for user in Set(users).sorted() {
            originals += try await purchaseIndexes(of: user).subscriptions
        }
        guard !originals.isEmpty else { return .never }
        let replies = try await redis.pipeline(Set(originals).sorted().map {
            RedisCommand("HMGET", keys.subscription(originalTransactionID: $0), "product_id", "status", "expires_at", "grace_expires_at")
        })
        var history = GroupHistory.never
        for reply in replies {
            let fields = (reply.array ?? []).map(\.string)
            guard fields.count == 4, let product = fields[0], products.contains(product), let status = fields[1] else { continue }
            if Self.isCurrent(status: status, expiresAt: fields[2].flatMap { Int64($0) }, graceExpiresAt: fields[3].flatMap { Int64($0) }, now: now) {
                return .active
            }
            history = .lapsed
        }
        return history
    }

    /// An offer signature issued for `user`, kept in their log (the newest 1,000) and counted.
    package func recordOfferSignature(user: String, fields: [(String, String)], now: Int64 = currentTimeMs()) async throws {
        try await redis.send(RedisCommand(
            ["XADD", keys.offerSignatures(user: user), "MAXLEN", "~", "1000", "*", "at", String(now)] + fields.flatMap { [$0.0, $0.1] }))
    }

    /// How many offer signatures were ever issued for `user`, and the newest `last` of them (newest first).
    package func offerSignatures(of user: String, last: Int = 10) async throws -> (count: Int, recent: [[String: String]]) {
        let key = keys.offerSignatures(user: user)
        guard try await redis.send("EXISTS", key).int == 1 else { return (0, []) }
        let info = (try await redis.send("XINFO", "STREAM", key).array ?? []).map { $0.string ?? ($0.int.map(String.init) ?? "") }
        let count = zip(info, info.dropFirst()).first { $0.0 == "entries-added" }.flatMap { Int($0.1) } ?? 0
        let entries = try await redis.send("XREVRANGE", key, "+", "-", "COUNT", String(last)).array ?? []
        return (count, entries.compactMap { $0.array?.last?.stringDictionary })
    }

    /// Whether a subscription record gives its entitlements at `now`: `active` until `expires_at`,
    /// `grace_period` until `grace_expires_at` (else `expires_at`).
    static func isCurrent(status: String, expiresAt: Int64?, graceExpiresAt: Int64?, now: Int64) -> Bool {
        switch status {
        case "active": return expiresAt.map { $0 > now } ?? true
        case "grace_period": return (graceExpiresAt ?? expiresAt).map { $0 > now } ?? false
        default: return false
        }
    }
}
