import PipelineCore
import RedisClient

extension PipelineStore {
    /// What `user` spent, less what Apple refunded, per currency (milliunits), over every purchase
    /// they still hold and Apple priced: every bucket's index of their purchases in one round trip,
    /// then their grant records, 500 a round trip. For the refund rules' `lifetime_spend`.
    package func netSpend(of user: String) async throws -> [String: Int64] {
        let buckets = keys.everyBucket
        let indexes = try await redis.pipeline(buckets.map { RedisCommand("ZRANGE", $0.purchases(user: user), "0", "-1") })
        var records: [String] = []
        for (bucket, reply) in zip(buckets, indexes) {
            if case .error(let message) = reply { throw RedisError.server(message) }
            records += (reply.array ?? []).compactMap(\.string).map { bucket.grant(unitInThisBucket: $0) }
        }
        let fields = ["price", "currency", "quantity", "revoked_quantity", "revoked_at", "user_id"]
        var spend: [String: Int64] = [:]
        for start in stride(from: 0, to: records.count, by: 500) {
            let chunk = records[start..<min(start + 500, records.count)]
            for reply in try await redis.pipeline(chunk.map { RedisCommand(["HMGET", $0] + fields) }) {
                if case .error(let message) = reply { throw RedisError.server(message) }
                let values = (reply.array ?? []).map(\.string)
                guard values.count == fields.count, let price = values[0].flatMap({ Int64($0) }), let currency = values[1],
                    values[5] == user
                else { continue }
                let quantity = values[2].flatMap { Int64($0) } ?? 1
                let revoked = (values[4]?.isEmpty == false) ? quantity : min(values[3].flatMap { Int64($0) } ?? 0, quantity)
                spend[currency, default: 0] += price * (quantity - revoked)
            }
        }
        return spend
    }
}
