import PipelineCore
import RedisClient

extension PipelineStore {
    /// What of a user the buckets hold, for erasure, read for every bucket at once: per bucket the
    /// keys that may name them (grant records, holds, owners, subscription records) and whether it
    /// has anything to erase; their tickets by the tickets' buckets; the products, Apple Accounts
    /// and app account tokens their purchases name.
    struct ErasureReads {
        var records: [Int: [String]] = [:]
        /// Buckets with an index, a count or a delivery of the user (or a record to rename).
        var touched: Set<Int> = []
        var tickets: [Int: [String]] = [:]
        var products: Set<String> = []
        var accounts: Set<String> = []
        var tokens: Set<String> = []
        /// Per bucket, the webhook destinations other than `default` routed there.
        var destinations: [Int: [String]] = [:]
    }

    /// Two round trips (and one more per 500 units): every bucket's indexes and counts, then the
    /// records of the units they name.
    func erasureReads(of user: String) async throws -> ErasureReads {
        let buckets = keys.everyBucket
        let indexes = try await redis.pipeline(buckets.flatMap { bucket in
            [
                RedisCommand("ZRANGE", bucket.purchases(user: user), "0", "-1"), RedisCommand("SMEMBERS", bucket.lifetime(user: user)),
                RedisCommand("SMEMBERS", bucket.subscriptions(user: user)),
                RedisCommand("EXISTS", bucket.refunds(user: user), bucket.refundsProrated(user: user), bucket.webhookEvents(user: user)),
                RedisCommand("SISMEMBER", bucket.webhookBusy, user), RedisCommand("SMEMBERS", bucket.webhookDestinations),
            ]
        })
        for reply in indexes { if case .error(let message) = reply { throw RedisError.server(message) } }
        var found = ErasureReads()
        var units: [(bucket: Int, unit: String)] = []
        var originals: [Int: Set<String>] = [:]
        for index in buckets.indices {
            let replies = indexes[(6 * index)..<(6 * index + 6)].map { $0 }
            let destinations = (replies[5].array ?? []).compactMap(\.string).filter { $0 != RedisKeys.defaultWebhookDestination }
            if !destinations.isEmpty {
                // Another destination's list may hold the user's events: the bucket's step deletes them.
                found.destinations[index] = destinations.sorted()
                found.touched.insert(index)
            }
            let listed = Set((replies[0].array ?? []).compactMap(\.string) + (replies[1].array ?? []).compactMap(\.string)).sorted()
            units += listed.map { (index, $0) }
            originals[index, default: []].formUnion((replies[2].array ?? []).compactMap(\.string))
            if !listed.isEmpty || !(originals[index]?.isEmpty ?? true) || (replies[3].int ?? 0) > 0 || replies[4].int == 1 {
                found.touched.insert(index)
            }
        }
        let fields = ["original_transaction_id", "ticket", "product_id", "app_transaction_id", "app_account_token"]
        for chunk in units.chunked(500) {
            let replies = try await redis.pipeline(chunk.flatMap { listed in
                [RedisCommand(["HMGET", buckets[listed.bucket].grant(unitInThisBucket: listed.unit)] + fields),
                 RedisCommand(["HMGET", buckets[listed.bucket].hold(unitInThisBucket: listed.unit)] + fields)]
            })
            for (index, listed) in chunk.enumerated() {
                let bucket = buckets[listed.bucket]
                found.records[listed.bucket, default: []] += [bucket.grant(unitInThisBucket: listed.unit), bucket.hold(unitInThisBucket: listed.unit)]
                for reply in [replies[2 * index], replies[2 * index + 1]] {
                    let values = (reply.array ?? []).map(\.string)
                    guard values.count == fields.count else { continue }
                    if let original = values[0], !original.isEmpty { originals[listed.bucket, default: []].insert(original) }
                    if let ticket = values[1], TicketID.isWellFormed(ticket) {
                        found.tickets[keys.layout.bucket(ofTicket: ticket), default: []].append(keys.ticket(ticket))
                    }
                    if let product = values[2], !product.isEmpty { found.products.insert(product) }
                    if let account = values[3], !account.isEmpty { found.accounts.insert(account) }
                    if let token = values[4], !token.isEmpty { found.tokens.insert(token.lowercased()) }
                }
            }
        }
        for (bucket, known) in originals {
            // An original lives in the bucket of its purchases: its owner and record are that bucket's keys.
            found.records[bucket, default: []] += known.flatMap { [keys.owner(originalTransactionID: $0), keys.subscription(originalTransactionID: $0)] }
        }
        for (bucket, records) in found.records { found.records[bucket] = Array(Set(records)).sorted() }
        for (bucket, tickets) in found.tickets { found.tickets[bucket] = Array(Set(tickets)).sorted() }
        return found
    }

    /// The ids of every bucket's fulfilment entries naming the user (as its user, or the one a
    /// grant was transferred from), by bucket: the streams read a page of 1,000 entries each per
    /// round trip, every bucket's at once. Each stream keeps `IAP_FULFILMENT_RETENTION_S` (30 days
    /// by default): that is what this reads.
    func entries(naming user: String) async throws -> [Int: [String]] {
        let buckets = keys.everyBucket
        var starts = [String](repeating: "-", count: buckets.count)
        var open = Array(buckets.indices)
        var found: [Int: [String]] = [:]
        while !open.isEmpty {
            let replies = try await redis.pipeline(open.map { RedisCommand("XRANGE", buckets[$0].fulfilment, starts[$0], "+", "COUNT", "1000") })
            var next: [Int] = []
            for (index, reply) in zip(open, replies) {
                if case .error(let message) = reply { throw RedisError.server(message) }
                let page = reply.array ?? []
                for entry in page {
                    guard let parts = entry.array, parts.count == 2, let id = parts[0].string else { continue }
                    starts[index] = "(" + id
                    let fields = parts[1].stringDictionary
                    if fields["user_id"] == user || fields["transferred_from"] == user { found[index, default: []].append(id) }
                }
                if page.count == 1000 { next.append(index) }
            }
            open = next
        }
        return found
    }

    /// The user's own keys, out of any bucket: consent, consumption facts, the app account tokens
    /// bound to them, their seats on Apple Accounts, their offer signatures, their daily windows.
    /// Returns how many existed.
    func deleteOwnKeys(of user: String, products: Set<String>, accounts: Set<String>, tokens: Set<String> = []) async throws -> Int {
        let first = try await redis.send("GET", keys.userAccountToken(user: user)).string
        let seated = try await redis.send("SMEMBERS", keys.userAppleAccounts(user: user)).array?.compactMap(\.string) ?? []
        let candidates = tokens.union(first.map { [$0] } ?? []).sorted()
        var commands: [RedisCommand] = []
        if !candidates.isEmpty {
            // A token is bound once and never changes: one bound to the user is theirs to delete.
            let holders = try await redis.pipeline(candidates.map { RedisCommand("GET", keys.accountToken($0)) })
            for (token, holder) in zip(candidates, holders) where holder.string == user {
                commands.append(RedisCommand("DEL", keys.accountToken(token)))
            }
        }
        for account in accounts.union(seated).sorted() { commands.append(RedisCommand("HDEL", keys.appleAccount(account), "u:\(user)")) }
        for product in products.sorted() { commands.append(RedisCommand("DEL", keys.dailyWindow(user: user, product: product))) }
        // The user's grants for a time: their ends off the schedule, then their records.
        let grantKeys = keys.ofTimedGrants(user: user)
        let granted = try await redis.send("HKEYS", grantKeys.timedGrants(user: user)).array?.compactMap(\.string) ?? []
        for id in granted { commands.append(RedisCommand("ZREM", grantKeys.timedGrantEnds, user + "\0" + id)) }
        commands.append(RedisCommand("DEL", grantKeys.timedGrants(user: user)))
        for key in [
            keys.consent(user: user), keys.consumption(user: user), keys.userAccountToken(user: user), keys.userAppleAccounts(user: user),
            keys.offerSignatures(user: user),
        ] { commands.append(RedisCommand("DEL", key)) }
        let replies = try await redis.pipeline(commands)
        for reply in replies { if case .error(let message) = reply { throw RedisError.server(message) } }
        return replies.compactMap(\.int).reduce(0) { $0 + Int($1) }
    }
}
