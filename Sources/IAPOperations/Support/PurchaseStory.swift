import PipelineCore
import RedisClient

/// What the books hold of one purchase, read by what support has in hand: its grant unit (a
/// consumable's transaction id, a non-consumable's original transaction id, a subscription
/// period's `wol:…`), or the original transaction id of a subscription. The console's purchase
/// timeline; read from the purchase's own keys, never a scan.
package struct PurchaseStory: Sendable, Equatable {
    /// The grant unit; `nil` when only the subscription is known (by its original transaction id).
    package var unit: String?
    package var originalTransactionID: String
    /// The grant record (`grant:<unit>`), empty when never granted.
    package var grant: [String: String] = [:]
    /// The hold (`held:<unit>`), empty when never held.
    package var hold: [String: String] = [:]
    /// The ticket that claimed the unit (`txn:<unit>`).
    package var claimTicket: String?
    /// That ticket as it stands; `nil` when it expired.
    package var ticket: Ticket?
    /// When Apple refunded or revoked the unit before it was granted (`refunded:<unit>`, ms).
    package var refundedBeforeGrant: String?
    /// The user first granted the original transaction (`owner:`).
    package var owner: String?
    /// The subscription (`subscription:<original>`), empty for other products.
    package var subscription: [String: String] = [:]
    /// When the subscription is next re-checked with Apple (ms), if scheduled.
    package var nextRecheck: Int64?
    /// What the game said of this transaction when Apple asked before a refund (`consumption:`).
    package var consumption: String?
    /// Whether the user consented to Apple being told (`consent:`); `nil`: never said.
    package var consent: Bool?
    /// Apple's newest notifications about the original transaction that changed no grant
    /// (`notifications:<original>`, JSON, newest first, at most 10).
    package var notifications: [String] = []
    /// The grant's user's fulfilment events of this bucket still waiting for the webhook (every destination's).
    package var webhookWaiting: Int?
}

extension PipelineStore {
    /// The story of `id`, a grant unit or an original transaction id; `nil` when the books know
    /// neither. Three round trips at most: the unit in every bucket, the purchase's keys in its
    /// bucket, then the claiming ticket and the user's consumption facts.
    package func purchaseStory(of id: String) async throws -> PurchaseStory? {
        let asUnit = try await originalTransactionID(ofUnit: id)
        let original = asUnit ?? id
        let unit = asUnit == nil ? nil : id
        let purchase = keys.ofPurchase(originalTransactionID: original)
        var commands = [
            RedisCommand("GET", purchase.owner(originalTransactionID: original)),
            RedisCommand("HGETALL", purchase.subscription(originalTransactionID: original)),
            RedisCommand("ZSCORE", purchase.rechecks, original),
            RedisCommand("LRANGE", purchase.notifications(originalTransactionID: original), "0", "9"),
        ]
        if let unit {
            commands += [
                RedisCommand("GET", purchase.claim(unit: unit, originalTransactionID: original)),
                RedisCommand("HGETALL", purchase.grant(unit: unit, originalTransactionID: original)),
                RedisCommand("HGETALL", purchase.hold(unitInThisBucket: unit)),
                RedisCommand("GET", purchase.refunded(unit: unit, originalTransactionID: original)),
            ]
        }
        let replies = try await redis.pipeline(commands)
        for reply in replies { try reply.checked() }
        var story = PurchaseStory(unit: unit, originalTransactionID: original)
        story.owner = replies[0].string
        story.subscription = replies[1].stringDictionary.filter { $0.key != "receipt" }
        story.nextRecheck = replies[2].string.flatMap { Double($0) }.map { Int64($0) }
        story.notifications = (replies[3].array ?? []).compactMap(\.string)
        if unit != nil {
            story.claimTicket = replies[4].string
            story.grant = replies[5].stringDictionary
            story.hold = replies[6].stringDictionary
            story.refundedBeforeGrant = replies[7].string.map { String($0.prefix { $0 != ":" }) }
        }
        guard unit != nil || story.owner != nil || !story.subscription.isEmpty else { return nil }
        if let claim = story.claimTicket { story.ticket = try await ticket(claim) }
        if let user = story.grant["user_id"] ?? story.hold["user_id"], let transaction = story.grant["transaction_id"] ?? story.hold["transaction_id"] {
            let facts = try await redis.pipeline([
                RedisCommand("HGET", keys.consumption(user: user), transaction), RedisCommand("GET", keys.consent(user: user)),
                RedisCommand("LLEN", purchase.webhookEvents(user: user)), RedisCommand("SMEMBERS", purchase.webhookDestinations),
            ])
            for reply in facts { try reply.checked() }
            story.consumption = facts[0].string
            story.consent = facts[1].string.map { $0 == "1" }
            story.webhookWaiting = facts[2].int.map { Int($0) }
            // The user's events waiting for the other destinations too.
            let others = (facts[3].array ?? []).compactMap(\.string).filter { $0 != RedisKeys.defaultWebhookDestination }
            if !others.isEmpty {
                let lengths = try await redis.pipeline(others.map { RedisCommand("LLEN", purchase.webhookEvents(user: user, to: $0)) })
                story.webhookWaiting = (story.webhookWaiting ?? 0) + lengths.compactMap(\.int).reduce(0) { $0 + Int($1) }
            }
        }
        return story
    }

    /// The ticket a notification's UUID was stored under (`notification:<uuid>`, in whichever
    /// bucket holds it), while it is kept.
    package func notificationTicket(uuid: String) async throws -> String? {
        let replies = try await redis.pipeline(keys.everyBucket.map { RedisCommand("GET", $0.notification(uuid: uuid)) })
        for reply in replies { try reply.checked() }
        return replies.lazy.compactMap(\.string).first
    }
}
