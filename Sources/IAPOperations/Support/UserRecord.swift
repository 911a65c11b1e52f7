import PipelineCore
import RedisClient

/// A user's record in one answer (`GET /v1/users/{id}`, `iapctl user record`): their purchases,
/// newest first and paged, each as its grant record (or hold) says; their subscriptions; their
/// refunds counted; the Apple Accounts their purchases name; their consent and app account token.
/// Read from the user's indexes and the records they name: never a scan of the ledger or stream.
package struct UserRecord: Codable, Sendable, Equatable {
    package var userID: String
    /// Newest first: `state` (`granted`, `partially_refunded`, `revoked`, `transferred` (another
    /// user holds it now), `held`, `rejected`) and the record's fields, as strings.
    package var purchases: [[String: String]]
    /// The `before` of the next page (ms, exclusive); absent on the last page.
    package var nextBefore: String?
    /// By original transaction id: status, product, expiry, auto-renew, grace, latest transaction.
    package var subscriptions: [String: [String: String]]
    package var refunds: Refunds
    /// The Apple Accounts (`appTransactionId`) the listed purchases and the subscriptions name.
    package var appleAccounts: [String]
    /// Whether the user consented to our telling Apple about their purchases; absent: never said.
    package var consent: Bool?
    package var appAccountToken: String?

    package struct Refunds: Codable, Sendable, Equatable {
        /// Refunds and revocations in whole, less reversals.
        package var whole: Int
        /// Refunds in part, in milliunits (100000 is one refund).
        package var prorated: Int
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case purchases
        case nextBefore = "next_before"
        case subscriptions, refunds
        case appleAccounts = "apple_accounts"
        case consent
        case appAccountToken = "app_account_token"
    }

    /// The grant record's (or hold's) fields a record shows.
    static let purchaseFields = [
        "unit", "product_id", "quantity", "transaction_id", "original_transaction_id", "environment", "source", "granted_at",
        "purchase_date", "price", "currency", "storefront", "offer_type", "offer_identifier", "offer_discount_type", "offer_period",
        "in_app_ownership_type", "app_transaction_id", "revoked_at", "revoked_quantity", "revocation_reason", "revocation_type",
        "revocation_percentage", "reinstated_at", "transferred_from", "held_at", "reason", "status", "user_id",
    ]
    /// The subscription record's fields a record shows (not the legacy receipt it keeps).
    static let subscriptionFields = [
        "product_id", "status", "expires_at", "grace_expires_at", "auto_renew", "latest_transaction_id", "environment",
        "app_transaction_id", "entitlements",
    ]

    /// What a purchase is for the user, from its grant record or, without one, its hold.
    static func state(grant: [String: String], hold: [String: String], user: String) -> String? {
        if !grant.isEmpty {
            if grant["user_id"] != user { return "transferred" }
            if grant["revoked_at"]?.isEmpty == false { return "revoked" }
            if (grant["revoked_quantity"].flatMap { Int($0) } ?? 0) > 0 { return "partially_refunded" }
            return "granted"
        }
        return hold["status"].map { $0 == "held" ? "held" : "rejected" }
    }
}

extension PipelineStore {
    /// The user's record: a page of `limit` purchases bought before `before` (ms, exclusive;
    /// `nil`: the newest), newest first (a page takes in every purchase of its last ms that was
    /// read), with what the user's indexes, consent and token say. Three round trips.
    package func userRecord(of user: String, limit: Int = 50, before: Int64? = nil) async throws -> UserRecord {
        let buckets = keys.everyBucket
        let newest = before.map { "(\($0)" } ?? "+inf"
        var commands = buckets.map {
            RedisCommand("ZREVRANGEBYSCORE", $0.purchases(user: user), newest, "-inf", "WITHSCORES", "LIMIT", "0", String(limit + 1))
        }
        commands += [RedisCommand("GET", keys.consent(user: user)), RedisCommand("GET", keys.userAccountToken(user: user))]
        let replies = try await redis.pipeline(commands)
        for reply in replies { if case .error(let message) = reply { throw RedisError.server(message) } }
        var listed: [(score: Int64, unit: String, bucket: RedisKeys)] = []
        for (bucket, reply) in zip(buckets, replies) {
            let items = (reply.array ?? []).compactMap(\.string)
            for index in stride(from: 0, to: items.count - 1, by: 2) {
                listed.append((Int64(items[index + 1]) ?? 0, items[index], bucket))
            }
        }
        listed.sort { ($0.score, $0.unit) > ($1.score, $1.unit) }
        var page = Array(listed.prefix(limit))
        while let last = page.last, page.count < listed.count, listed[page.count].score == last.score { page.append(listed[page.count]) }
        let indexes = try await purchaseIndexes(of: user)
        var record = UserRecord(
            userID: user, purchases: try await purchases(page.map { ($0.unit, $0.bucket) }, of: user),
            nextBefore: page.count < listed.count ? page.last.map { String($0.score) } : nil,
            subscriptions: try await subscriptionRecords(indexes.subscriptions),
            refunds: .init(whole: indexes.refunds, prorated: indexes.refundsProrated), appleAccounts: [],
            consent: replies[buckets.count].string.map { $0 == "1" }, appAccountToken: replies[buckets.count + 1].string)
        let accounts = record.purchases.compactMap { $0["app_transaction_id"] } + record.subscriptions.values.compactMap { $0["app_transaction_id"] }
        record.appleAccounts = Set(accounts.filter { !$0.isEmpty }).sorted()
        return record
    }

    /// Each unit's grant record (or, without one, its hold) as the record shows it.
    private func purchases(_ units: [(unit: String, bucket: RedisKeys)], of user: String) async throws -> [[String: String]] {
        guard !units.isEmpty else { return [] }
        let replies = try await redis.pipeline(units.flatMap { [
            RedisCommand("HGETALL", $0.bucket.grant(unitInThisBucket: $0.unit)), RedisCommand("HGETALL", $0.bucket.hold(unitInThisBucket: $0.unit)),
        ] })
        var found: [[String: String]] = []
        for (index, listed) in units.enumerated() {
            let (grant, hold) = (replies[2 * index].stringDictionary, replies[2 * index + 1].stringDictionary)
            guard let state = UserRecord.state(grant: grant, hold: hold, user: user) else { continue }
            var purchase = (grant.isEmpty ? hold : grant).filter { UserRecord.purchaseFields.contains($0.key) && !$0.value.isEmpty }
            purchase["state"] = state
            purchase["unit"] = listed.unit
            found.append(purchase)
        }
        return found
    }

    private func subscriptionRecords(_ originals: [String]) async throws -> [String: [String: String]] {
        guard !originals.isEmpty else { return [:] }
        let replies = try await redis.pipeline(originals.map { RedisCommand("HGETALL", keys.subscription(originalTransactionID: $0)) })
        var records: [String: [String: String]] = [:]
        for (original, reply) in zip(originals, replies) {
            records[original] = reply.stringDictionary.filter { UserRecord.subscriptionFields.contains($0.key) && !$0.value.isEmpty }
        }
        return records
    }
}
