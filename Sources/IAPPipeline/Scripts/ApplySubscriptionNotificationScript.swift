import PlainJSON
import RedisClient

extension PipelineScripts {
    /// Notify stage, a notification that moves a subscription without a grant (`EXPIRED`,
    /// `DID_FAIL_TO_RENEW`, `GRACE_PERIOD_EXPIRED`, `DID_CHANGE_RENEWAL_STATUS`): applies it to
    /// the subscription's record in signed-time order (`applySubscription`, with its entitlement
    /// events), keeps it on the original transaction's list (newest first, at most `keep`),
    /// finishes the ticket with what applying it did; ack.
    /// KEYS: in-flight list, ticket key, the original transaction's notification list, fulfilment stream.
    /// ARGV[1]: the job as taken; ARGV[2]: `ApplySubscriptionNotificationArguments` as JSON.
    /// Returns `{1, result}` (`applied`, `stale`, `unknown_subscription`), `{0}` lease lost, `{-1}` no ticket.
    static let applySubscriptionNotification = RedisScript(
        name: "apply_subscription_notification", source: GrantEffects.lua + """
        if redis.call('EXISTS', KEYS[2]) == 0 then return {-1} end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return {0} end
        local a = cjson.decode(ARGV[2])
        recheckPolicy = a.recheck
        local result = applySubscription(a.prefix, a.subscription, a.now, KEYS[4])
        redis.call('LPUSH', KEYS[3], a.entry)
        redis.call('LTRIM', KEYS[3], 0, tonumber(a.keep) - 1)
        redis.call('HSET', KEYS[2], 'status', 'applied', 'result', result, 'attempts', '1', 'updated_at', a.now)
        redis.call('PUBLISH', a.channel, a.ticket)
        return {1, result}
        """)
}

/// A subscription's new state, as `applySubscription` reads it (numbers as strings: cjson reads
/// numbers as doubles).
public struct SubscriptionChange: Sendable, Equatable {
    public var originalTransactionID: String
    /// The user, when known (a grant record's); `nil`: the record's owner, or nothing when there is no record.
    public var userID: String?
    public var productID: String?
    /// `nil`: unchanged (a change of the auto-renew setting only).
    public var status: String?
    public var expiresAt: Int64?
    public var graceExpiresAt: Int64?
    /// When Apple said it (the notification's `signedDate`).
    public var signedAt: Int64
    /// What caused it: `notification:<TYPE>`.
    public var cause: String
    public var transactionID: String?
    public var entitlements: [String]
    public var environment: String?
    /// `1`/`0` when the notification says whether the subscription renews automatically.
    public var autoRenew: Int?
    /// Only when `transactionID` is the record's latest (a refund of an old period changes nothing now).
    public var requireLatest = false
    /// Where the news came from, on the fulfilment stream's entries: `notification` or `recheck`.
    public var source = "notification"

    public init(
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
            "require_latest": requireLatest ? .bool(true) : nil,
        ])
    }
}

/// The named arguments of `apply_subscription_notification`.
struct ApplySubscriptionNotificationArguments: ScriptArguments {
    var ticket: String
    var now: String
    var channel: String
    var prefix: String
    var entry: String
    var keep: String
    var subscription: SubscriptionChange
    var recheck: RecheckSchedule?

    var json: JSONValue {
        .members([
            "ticket": .string(ticket), "now": .string(now), "channel": .string(channel), "prefix": .string(prefix),
            "entry": .string(entry), "keep": .string(keep), "subscription": subscription.json, "recheck": recheck?.json,
        ])
    }
}
