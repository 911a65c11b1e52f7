import PipelineCore
import PlainJSON
import RedisClient

/// `apply_subscription_notification`: a notification that moves a subscription without a grant.
package struct ApplySubscriptionNotification: PipelineScript {
    package static let script = LuaSource.script("apply_subscription_notification")
    package let keys: [String]
    package let arguments: [String]

    package init(
        _ keys: RedisKeys, member: String, taken: String, job: Job, change: SubscriptionChange, entry: String,
        event: [String: String]?, recheck: RecheckSchedule?, now: Int64
    ) {
        let original = change.originalTransactionID
        self.keys = [
            keys.inflight(member: member), keys.ticket(job.ticket), keys.notifications(originalTransactionID: original),
            keys.fulfilment, keys.userEvents, keys.subscription(originalTransactionID: original),
            keys.ofPurchase(originalTransactionID: original).rechecks, keys.figures(day: FigureDay(milliseconds: now)),
            keys.ofPurchase(originalTransactionID: original).subscribers,
        ] + (change.userID.map { [keys.ofPurchase(originalTransactionID: original).subscriptions(user: $0)] } ?? [])
        arguments = [taken, JSONValue.members([
            "ticket": .string(job.ticket), "now": .string(String(now)), "channel": .string(keys.results),
            "entry": .string(entry), "keep": .string("100"), "subscription": change.json, "recheck": recheck?.json,
            "event": event.map { .object($0.mapValues(JSONValue.string)) },
        ]).canonicalText]
    }

    package static let results: Set<String> = ["applied", "stale", "older_period", "not_latest", "unknown_subscription"]

    /// How the job moved and, when it did, what applying it did.
    package static func decode(_ reply: RedisReply) throws -> (TransitionResult, String?) {
        let result = try TransitionResult(reply, script: name)
        guard result == .moved else { return (result, nil) }
        guard let items = reply.array, items.count == 2, let what = items[1].string, results.contains(what) else {
            throw ScriptReplyError(script: name, reply: reply)
        }
        return (result, what)
    }
}

/// A subscription's new state, as `applySubscription` reads it (numbers as strings: cjson reads
/// numbers as doubles).
package struct SubscriptionChange: Sendable, Equatable {
    package var originalTransactionID: String
    /// The user, when known (a grant record's); `nil`: the record's owner, or nothing when there is no record.
    package var userID: String?
    package var productID: String?
    /// `nil`: unchanged (a change of the auto-renew setting only).
    package var status: String?
    package var expiresAt: Int64?
    package var graceExpiresAt: Int64?
    /// When Apple said it (the notification's `signedDate`).
    package var signedAt: Int64
    /// What caused it: `notification:<TYPE>`.
    package var cause: String
    package var transactionID: String?
    package var entitlements: [String]
    package var environment: String?
    /// `1`/`0` when the notification says whether the subscription renews automatically.
    package var autoRenew: Int?
    /// The Apple Account it is bought on (`appTransactionId` of its transaction or renewal info).
    package var appTransactionID: String?
    /// Only when `transactionID` is the record's latest (a refund of an old period changes nothing now).
    package var requireLatest = false
    /// Where the news came from, on the fulfilment stream's entries: `notification` or `recheck`.
    package var source = "notification"
    /// Why it expired, when Apple said (`ExpirationReason`): on the `expired` entry.
    package var expirationReason: String?
    /// Apple's win-back offers the subscriber may have now, when the renewal info says (empty: none).
    package var eligibleWinBackOfferIDs: [String]?
    /// A re-check's: where it read the customer's history to (kept on the record).
    package var historyRevision: String?
    /// The app it is bought in (kept on the record; on its `entitlement_changed` and `expired` events).
    package var bundleID: String?
    /// How it renews, when the renewal info says its billing plan (name, value, …: kept on the
    /// record, the commitment's renewal fields it lacks taken off); `nil`: the record's stay.
    package var renewalPlan: [String]?

    package init(
        originalTransactionID: String, userID: String? = nil, productID: String?, status: String?, expiresAt: Int64?,
        graceExpiresAt: Int64? = nil, signedAt: Int64, cause: String, transactionID: String?, entitlements: [String],
        environment: String?, autoRenew: Int? = nil, requireLatest: Bool = false, source: String = "notification"
    ) {
        self.source = source
        self.originalTransactionID = originalTransactionID
        self.userID = userID
        self.productID = productID
        self.status = status
        self.expiresAt = expiresAt
        self.graceExpiresAt = graceExpiresAt
        self.signedAt = signedAt
        self.cause = cause
        self.transactionID = transactionID
        self.entitlements = entitlements
        self.environment = environment
        self.autoRenew = autoRenew
        self.requireLatest = requireLatest
    }

    var json: JSONValue {
        .members([
            "original_transaction_id": .string(originalTransactionID),
            "user_id": userID.json,
            "product_id": productID.json,
            "status": status.json,
            "expires_at": expiresAt.map { .string(String($0)) },
            "grace_expires_at": graceExpiresAt.map { .string(String($0)) },
            "signed_at": .string(String(signedAt)),
            "cause": .string(cause),
            "source": .string(source),
            "transaction_id": transactionID.json,
            "entitlements": .string(entitlements.joined(separator: ",")),
            "environment": environment.json,
            "auto_renew": autoRenew.map { .string(String($0)) },
            "app_transaction_id": appTransactionID.json,
            "require_latest": requireLatest ? .bool(true) : nil,
            "expiration_reason": expirationReason.json,
            "eligible_win_back_offer_ids": eligibleWinBackOfferIDs.map { .string($0.joined(separator: ",")) },
            "history_revision": historyRevision.json,
            "bundle_id": bundleID.json,
            "renewal_plan": renewalPlan.map { .array($0.map { .string($0) }) },
        ])
    }
}
