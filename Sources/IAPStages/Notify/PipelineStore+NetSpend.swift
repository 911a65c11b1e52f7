import PipelineCore
import RedisClient

extension PipelineStore {
    /// The values of `fields` in the grant record of each purchase in `user`'s index (bought since
    /// `since`, ms, when given): every bucket's index in one round trip, then the records, 500 a
    /// round trip. A record no longer the user's (transferred away) is the caller's to skip: ask
    /// for `user_id`.
    package func grantRecords(of user: String, since: Int64? = nil, fields: [String]) async throws -> [[String?]] {
        let buckets = keys.everyBucket
        let indexes = try await redis.pipeline(buckets.map { bucket in
            since.map { from in RedisCommand("ZRANGEBYSCORE", bucket.purchases(user: user), String(from), "+inf") }
                ?? RedisCommand("ZRANGE", bucket.purchases(user: user), "0", "-1")
        })
        var records: [String] = []
        for (bucket, reply) in zip(buckets, indexes) {
            if case .error(let message) = reply { throw RedisError.server(message) }
            records += (reply.array ?? []).compactMap(\.string).map { bucket.grant(unitInThisBucket: $0) }
        }
        var values: [[String?]] = []
        for start in stride(from: 0, to: records.count, by: 500) {
            let chunk = records[start..<min(start + 500, records.count)]
            for reply in try await redis.pipeline(chunk.map { RedisCommand(["HMGET", $0] + fields) }) {
                if case .error(let message) = reply { throw RedisError.server(message) }
                let read = (reply.array ?? []).map(\.string)
                if read.count == fields.count { values.append(read) }
            }
        }
        return values
    }

    /// How many of a purchase's `quantity` units Apple took back: all of them once it was revoked
    /// (`revoked_at`), else the units a refund in part took (`revoked_quantity`).
    package static func revokedUnits(quantity: Int64, revokedQuantity: String?, revokedAt: String?) -> Int64 {
        revokedAt?.isEmpty == false ? quantity : min(revokedQuantity.flatMap { Int64($0) } ?? 0, quantity)
    }

    /// What `user` spent, less what Apple refunded, per currency (milliunits), over every purchase
    /// they still hold and Apple priced. For the refund rules' `lifetime_spend`.
    package func netSpend(of user: String) async throws -> [String: Int64] {
        var spend: [String: Int64] = [:]
        for values in try await grantRecords(of: user, fields: ["price", "currency", "quantity", "revoked_quantity", "revoked_at", "user_id"]) {
            guard let price = values[0].flatMap({ Int64($0) }), let currency = values[1], values[5] == user else { continue }
            let quantity = values[2].flatMap { Int64($0) } ?? 1
            spend[currency, default: 0] += price * (quantity - Self.revokedUnits(quantity: quantity, revokedQuantity: values[3], revokedAt: values[4]))
        }
        return spend
    }
}
