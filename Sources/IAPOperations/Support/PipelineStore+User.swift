import IAPStages
import PipelineCore
import RedisClient

/// Everything the pipeline knows about one user, for an operator (`iapctl user`).
package struct UserReport: Codable, Sendable {
    package var userID: String
    /// Refunds and revocations counted for `IAP_MAX_REFUNDS_PER_USER`.
    package var refunds: Int
    /// Prorated refunds (a consumable refunded in part) counted for it, in milliunits: 100000 is one refund.
    package var refundsProrated: Int
    /// The units of the non-consumables granted to the user.
    package var lifetime: [String]
    /// The user's subscription records, by original transaction id.
    package var subscriptions: [String: [String: String]]
    /// The user's purchases held now.
    package var held: [HeldPurchase]
    /// The user's entries of the fulfilment stream, oldest first, each with its stream `id`.
    package var timeline: [[String: String]]
    /// With a catalog: what the user is entitled to now.
    package var entitlements: UserEntitlements?
    /// What `GET /v1/users/{id}` answers: the newest 200 purchases, Apple Accounts, consent.
    package var record: UserRecord?

    enum CodingKeys: String, CodingKey {
        case refunds, lifetime, subscriptions, held, timeline, entitlements, record
        case userID = "user_id"
        case refundsProrated = "refunds_prorated"
    }
}

extension PipelineStore {
    /// A user's indexes of their purchases, every bucket's added up in one round trip: refunds
    /// counted (whole, and prorated in milliunits), non-consumable units, subscriptions' original
    /// transaction ids (sorted).
    func purchaseIndexes(of user: String) async throws -> PurchaseIndexes {
        let buckets = keys.everyBucket
        let replies = try await redis.pipeline(buckets.flatMap { bucket in
            [
                RedisCommand("GET", bucket.refunds(user: user)), RedisCommand("GET", bucket.refundsProrated(user: user)),
                RedisCommand("SMEMBERS", bucket.lifetime(user: user)), RedisCommand("SMEMBERS", bucket.subscriptions(user: user)),
            ]
        })
        var indexes = PurchaseIndexes()
        var lifetime: Set<String> = []
        var subscriptions: Set<String> = []
        for start in stride(from: 0, to: replies.count, by: 4) {
            indexes.refunds += replies[start].string.flatMap { Int($0) } ?? 0
            indexes.refundsProrated += replies[start + 1].string.flatMap { Int($0) } ?? 0
            lifetime.formUnion((replies[start + 2].array ?? []).compactMap(\.string))
            subscriptions.formUnion((replies[start + 3].array ?? []).compactMap(\.string))
        }
        indexes.lifetime = lifetime.sorted()
        indexes.subscriptions = subscriptions.sorted()
        return indexes
    }

    /// What `purchaseIndexes(of:)` adds up.
    struct PurchaseIndexes {
        var refunds = 0
        var refundsProrated = 0
        var lifetime: [String] = []
        var subscriptions: [String] = []
    }

    /// The user's grants, revocations, holds, subscriptions and entitlements. The timeline reads the
    /// whole fulfilment stream (in pages): for an investigation, not for a dashboard.
    package func userReport(user: String, catalog: ProductCatalog?, now: Int64 = currentTimeMs()) async throws -> UserReport {
        let indexes = try await purchaseIndexes(of: user)
        let originals = indexes.subscriptions
        var subscriptions: [String: [String: String]] = [:]
        if !originals.isEmpty {
            let records = try await redis.pipeline(originals.map { RedisCommand("HGETALL", keys.subscription(originalTransactionID: $0)) })
            for (original, record) in zip(originals, records) { subscriptions[original] = record.stringDictionary }
        }
        var timeline: [[String: String]] = []
        for entry in try await fulfilmentEntries() where entry.fields["user_id"] == user {
            var fields = entry.fields
            fields["id"] = entry.id
            timeline.append(fields)
        }
        let held = try await heldPurchases(limit: Int(Int32.max)).filter { $0.userID == user }
        var entitled: UserEntitlements?
        if let catalog { entitled = try await entitlements(user: user, catalog: catalog, now: now) }
        return UserReport(
            userID: user, refunds: indexes.refunds, refundsProrated: indexes.refundsProrated, lifetime: indexes.lifetime,
            subscriptions: subscriptions, held: held, timeline: timeline, entitlements: entitled,
            record: try await userRecord(of: user, limit: 200))
    }
}

/// One entry of a fulfilment stream.
package struct FulfilmentEntry: Sendable, Equatable {
    /// The entry's id in its bucket's stream.
    package var id: String
    package var fields: [String: String]
    package var bucket: Int
    /// The id the webhook delivers it under (`WebhookEvent.id`).
    package var eventID: String

    /// The id's parts (`<ms>-<seq>`), for ordering entries of different buckets' streams.
    var order: (Int64, Int64) { Self.order(of: id) }

    /// A stream id's parts (`<ms>-<seq>`) as numbers.
    static func order(of id: String) -> (Int64, Int64) {
        let parts = id.split(separator: "-")
        return (parts.first.flatMap { Int64($0) } ?? 0, parts.count > 1 ? Int64(parts[1]) ?? 0 : 0)
    }
}

extension PipelineStore {
    /// Every bucket's fulfilment stream, entries after `after` (an id, exclusive; `nil`: all),
    /// merged by id: the writing primaries' clocks order entries of different buckets, so across
    /// buckets the order is only as good as those clocks; within a bucket it is the stream's.
    package func fulfilmentEntries(after: String? = nil) async throws -> [FulfilmentEntry] {
        var entries: [FulfilmentEntry] = []
        for (index, bucket) in keys.everyBucket.enumerated() {
            var start = after.map { "(" + $0 } ?? "-"
            while true {
                let page = try await redis.send("XRANGE", bucket.fulfilment, start, "+", "COUNT", "1000").array ?? []
                for entry in page {
                    guard let parts = entry.array, parts.count == 2, let id = parts[0].string else { continue }
                    start = "(" + id
                    entries.append(FulfilmentEntry(
                        id: id, fields: parts[1].stringDictionary, bucket: index,
                        eventID: WebhookEvent.id(entry: id, bucket: index, of: keys.layout)))
                }
                if page.count < 1000 { break }
            }
        }
        if keys.layout.count > 1 { entries.sort { $0.order < $1.order } }
        return entries
    }
}
