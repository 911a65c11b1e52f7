import Foundation
import IAPStages
import PipelineCore
import RedisClient

extension LedgerMigration {
    /// A user's indexes, the holds index, the unclaimed purchases and the re-check schedule: each
    /// member to the same index of its purchase's bucket.
    func splitIndexes(_ plan: Plan, report: inout MigrationReport) async throws {
        for family: KeyFamily in [.lifetime, .userSubscriptions, .holds, .unclaimed, .rechecks, .purchases, .timedGrantEnds] {
            var members = 0, placed = 0
            var written: [String: Int] = [:]
            for chunk in plan.names(family).chunked(batch) {
                let read = try await source.pipeline(chunk.map { rest in
                    let key = "\(sourcePrefix):\(rest)"
                    switch family {
                    case .holds, .rechecks, .purchases, .timedGrantEnds: return RedisCommand("ZRANGE", key, "0", "-1", "WITHSCORES")
                    case .unclaimed: return RedisCommand("HGETALL", key)
                    default: return RedisCommand("SMEMBERS", key)
                    }
                })
                var commands: [RedisCommand] = []
                for (rest, reply) in zip(chunk, read) {
                    let items = (reply.array ?? []).compactMap(\.string)
                    let user = rest.split(separator: ":", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
                    switch family {
                    case .lifetime, .userSubscriptions:
                        members += items.count
                        for item in items {
                            let bucket = keys.ofPurchase(originalTransactionID: family == .lifetime ? original(ofUnit: item, plan) : item)
                            let key = family == .lifetime ? bucket.lifetime(user: user) : bucket.subscriptions(user: user)
                            commands.append(RedisCommand("SADD", key, item))
                            written[key, default: 0] += 1
                        }
                    case .timedGrantEnds:
                        // `<user> NUL <grant id>`: to the bucket of the user's grants.
                        for index in stride(from: 0, to: items.count - 1, by: 2) {
                            members += 1
                            let owner = String(items[index].prefix { $0 != "\0" })
                            let key = keys.ofTimedGrants(user: owner).timedGrantEnds
                            commands.append(RedisCommand("ZADD", key, items[index + 1], items[index]))
                            written[key, default: 0] += 1
                        }
                    case .holds, .rechecks, .purchases:
                        for index in stride(from: 0, to: items.count - 1, by: 2) {
                            members += 1
                            let bucket = keys.ofPurchase(
                                originalTransactionID: family == .rechecks ? items[index] : original(ofUnit: items[index], plan))
                            let key = family == .holds ? bucket.holds : family == .rechecks ? bucket.rechecks : bucket.purchases(user: user)
                            commands.append(RedisCommand("ZADD", key, items[index + 1], items[index]))
                            written[key, default: 0] += 1
                        }
                    default:
                        for index in stride(from: 0, to: items.count - 1, by: 2) {
                            members += 1
                            let json = (try? JSONSerialization.jsonObject(with: Data(items[index + 1].utf8))) as? [String: Any]
                            let original = json?["original_transaction_id"] as? String ?? items[index]
                            let key = keys.ofPurchase(originalTransactionID: original).unclaimed
                            commands.append(RedisCommand("HSET", key, items[index], items[index + 1]))
                            written[key, default: 0] += 1
                        }
                    }
                }
                for part in commands.chunked(batch) { try Self.expectOK(try await destination.pipeline(Array(part))) }
                placed += commands.count
            }
            // Verified: every index written holds at least what was put there (the sum of sizes).
            var found = 0
            for chunk in Array(written.keys).chunked(batch) {
                let replies = try await destination.pipeline(chunk.map { key in
                    RedisCommand([KeyFamily.holds, .rechecks, .purchases, .timedGrantEnds].contains(family) ? "ZCARD" : family == .unclaimed ? "HLEN" : "SCARD", key)
                })
                found += replies.compactMap(\.int).reduce(0) { $0 + Int($1) }
            }
            report.add(family.rawValue, source: members, moved: placed, found: found, note: "\(plan.names(family).count) keys split into \(written.count)")
        }
    }

    /// Each user's events (`user-events`, one key without buckets): each member to the index of
    /// the bucket its entry went to: its purchase's, or, for one naming none, the bucket whose
    /// stream holds its entry (copied before). The source caps a user's at `userEventsCap`, so
    /// no bucket's range holds more.
    func splitUserEvents(_ plan: Plan, report: inout MigrationReport) async throws {
        guard plan.names(.userEvents).contains("user-events") else { return }
        let source = "\(sourcePrefix):user-events"
        var start = "-", read = 0, written = 0
        var touched = Set<String>()
        while true {
            let page = try await self.source.send("ZRANGE", source, start, "+", "BYLEX", "LIMIT", "0", String(batch)).checked()
            let members = page.array?.compactMap(\.string) ?? []
            var commands: [RedisCommand] = []
            for member in members {
                let bucket = try await bucket(ofUserEvent: member)
                commands.append(RedisCommand("ZADD", bucket.userEvents, "0", member))
                touched.insert(bucket.userEvents)
            }
            if !commands.isEmpty { try Self.expectOK(try await destination.pipeline(commands)) }
            read += members.count
            written += commands.count
            guard members.count == batch, let last = members.last else { break }
            start = "(" + last
        }
        let sizes = try await destination.pipeline(touched.map { RedisCommand("ZCARD", $0) })
        report.add("user-events", source: read, moved: written, found: sizes.compactMap(\.int).reduce(0) { $0 + Int($1) })
    }

    /// The bucket of a member of `user-events`: its purchase's, else the one whose stream holds its
    /// entry, else the first.
    private func bucket(ofUserEvent member: String) async throws -> RedisKeys {
        guard let (_, event) = UserEvent.parse(member: member, bucket: 0) else { return keys.inBucket(0) }
        if !event.originalTransactionID.isEmpty { return keys.ofPurchase(originalTransactionID: event.originalTransactionID) }
        let id = event.entryID
        let found = try await destination.pipeline(keys.everyBucket.map { RedisCommand("XRANGE", $0.fulfilment, id, id) })
        return found.firstIndex { ($0.array?.isEmpty ?? true) == false }.map { keys.inBucket($0) } ?? keys.inBucket(0)
    }

    /// A user's refund count (`refunds`) or prorated refunds (`refunds-prorated`), per bucket: each
    /// bucket gets what the grant records there show standing for the user (`standing`, each with
    /// its weight: 1 a refund in whole, the percentage a refund in part); the source's count stays
    /// the sum (a count its records do not explain, as a purchase granted to another user, is
    /// kept on the bucket with the most, else the first).
    func recount(
        _ family: KeyFamily, _ standing: [(user: String, original: String, weight: Int)], _ plan: Plan, report: inout MigrationReport,
        key: (RedisKeys, String) -> String
    ) async throws {
        var byUser: [String: [Int: Int]] = [:]
        for grant in standing {
            byUser[grant.user, default: [:]][keys.layout.bucket(ofOriginalTransactionID: grant.original), default: 0] += grant.weight
        }
        var total = 0, found = 0
        let head = "\(family):"
        for chunk in plan.names(family).chunked(batch) {
            let counts = try await source.pipeline(chunk.map { RedisCommand("GET", "\(sourcePrefix):\($0)") })
            var commands: [RedisCommand] = []
            for (rest, reply) in zip(chunk, counts) {
                let user = String(rest.dropFirst(head.count))
                let count = reply.string.flatMap { Int($0) } ?? 0
                total += count
                for (bucket, n) in spread(count, over: byUser[user] ?? [:]) {
                    let name = key(keys.inBucket(bucket), user)
                    if n > 0 { commands.append(RedisCommand("SET", name, String(n))) } else if keys.layout.count > 1 {
                        commands.append(RedisCommand("DEL", name))
                    }
                }
            }
            try Self.expectOK(try await destination.pipeline(commands))
            let users = chunk.map { String($0.dropFirst(head.count)) }
            let read = try await destination.pipeline(users.flatMap { user in keys.everyBucket.map { RedisCommand("GET", key($0, user)) } })
            found += read.compactMap { $0.string.flatMap { Int($0) } }.reduce(0, +)
        }
        report.add(family.rawValue, source: total, moved: total, found: found, note: "counts summed over buckets")
    }

    /// `count` spread over every bucket as `buckets` says, taking from (or adding to) the bucket
    /// with the most until the sum is `count`.
    func spread(_ count: Int, over known: [Int: Int]) -> [(Int, Int)] {
        var buckets = known
        var sum = buckets.values.reduce(0, +)
        while sum > count, let most = buckets.max(by: { $0.value < $1.value }) {
            let less = min(most.value, sum - count)
            buckets[most.key] = most.value - less
            sum -= less
        }
        if sum < count {
            let most = buckets.max(by: { $0.value < $1.value })?.key ?? 0
            buckets[most, default: 0] += count - sum
        }
        return (0..<keys.layout.count).map { ($0, buckets[$0] ?? 0) }
    }
}
