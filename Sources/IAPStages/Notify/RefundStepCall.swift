import PipelineCore
import PlainJSON
import RedisClient

/// What `revoke_grant` and `reinstate_grant` share: their keys and arguments, and the grant's
/// owner, which is data: the first call declares no owner; a grant that has one answers
/// `{-2, owner}`, and the call declares that owner's refund counts (whole and prorated) and, for a subscription's
/// period, the record, the schedule and the owner's subscriptions.
struct RefundStepCall: Sendable {
    private let redisKeys: RedisKeys
    /// The keys of the purchase's bucket, where its owner's refund count and subscriptions are.
    private let purchaseKeys: RedisKeys
    private let fixed: [String]
    private let subscriptionID: String?
    private var members: JSONObject
    package private(set) var keys: [String]
    package private(set) var arguments: [String]

    init(
        _ keys: RedisKeys, member: String, taken: String, job: Job, unit: String, originalTransactionID original: String,
        subscription: SubscriptionChange?, recheck: RecheckSchedule?, now: Int64, extra: JSONObject = [:]
    ) {
        redisKeys = keys
        purchaseKeys = keys.ofPurchase(originalTransactionID: original)
        fixed = [
            keys.inflight(member: member), keys.ticket(job.ticket), keys.grant(unit: unit, originalTransactionID: original),
            keys.refunded(unit: unit, originalTransactionID: original), keys.ofPurchase(originalTransactionID: original).fulfilment,
            keys.ofPurchase(originalTransactionID: original).userEvents,
            keys.ofPurchase(originalTransactionID: original).figures(day: FigureDay(milliseconds: now)),
        ]
        subscriptionID = subscription?.originalTransactionID
        members = extra.merging([
            "ticket": .string(job.ticket), "now": .string(String(now)), "channel": .string(keys.results(ofTicket: job.ticket)),
            "notification": .string(job.notification?.uuid ?? ""),
        ]) { $1 }
        if let subscription { members["subscription"] = subscription.json }
        if let recheck { members["recheck"] = recheck.json }
        if let source = job.source, source != "notification" { members["source"] = .string(source) }
        self.keys = fixed
        arguments = [taken, JSONValue.object(members).canonicalText]
    }

    mutating func declare(_ needed: RedisReply, script: String) throws {
        guard let owner = needed.string else { throw ScriptReplyError(script: script, reply: needed) }
        keys = fixed + [purchaseKeys.refunds(user: owner), purchaseKeys.refundsProrated(user: owner)]
        if let subscriptionID {
            keys += [
                redisKeys.subscription(originalTransactionID: subscriptionID),
                redisKeys.ofPurchase(originalTransactionID: subscriptionID).rechecks,
                redisKeys.ofPurchase(originalTransactionID: subscriptionID).subscriptions(user: owner),
                redisKeys.ofPurchase(originalTransactionID: subscriptionID).subscribers,
            ]
        }
        members["owner"] = .string(owner)
        arguments[1] = JSONValue.object(members).canonicalText
    }

    /// How the job moved and, when it did, what the step did.
    static func decode(_ reply: RedisReply, script: String, results: Set<String>) throws -> (TransitionResult, String?) {
        let result = try TransitionResult(reply, script: script)
        guard result == .moved else { return (result, nil) }
        guard let items = reply.array, items.count == 2, let what = items[1].string, results.contains(what) else {
            throw ScriptReplyError(script: script, reply: reply)
        }
        return (result, what)
    }
}

/// `revoke_grant`: REFUND or REVOKE of one grant unit, once.
package struct RevokeGrant: DeclaringScript {
    package static let script = LuaSource.script("revoke_grant")
    private var call: RefundStepCall
    package var keys: [String] { call.keys }
    package var arguments: [String] { call.arguments }

    package init(
        _ keys: RedisKeys, member: String, taken: String, job: Job, unit: String, originalTransactionID: String,
        revocation: Revocation, subscription: SubscriptionChange?, recheck: RecheckSchedule?, now: Int64
    ) {
        call = RefundStepCall(
            keys, member: member, taken: taken, job: job, unit: unit, originalTransactionID: originalTransactionID,
            subscription: subscription, recheck: recheck, now: now, extra: revocation.json)
    }

    package mutating func declare(_ needed: RedisReply) throws { try call.declare(needed, script: Self.name) }

    /// `revoked`, `partially_revoked`, `already_revoked`, `refund_remembered` when it moved.
    package static func decode(_ reply: RedisReply) throws -> (TransitionResult, String?) {
        try RefundStepCall.decode(reply, script: name, results: ["revoked", "partially_revoked", "already_revoked", "refund_remembered"])
    }
}

/// `reinstate_grant`: REFUND_REVERSED of one grant unit, once.
package struct ReinstateGrant: DeclaringScript {
    package static let script = LuaSource.script("reinstate_grant")
    private var call: RefundStepCall
    package var keys: [String] { call.keys }
    package var arguments: [String] { call.arguments }

    package init(
        _ keys: RedisKeys, member: String, taken: String, job: Job, unit: String, originalTransactionID: String,
        subscription: SubscriptionChange?, recheck: RecheckSchedule?, now: Int64
    ) {
        call = RefundStepCall(
            keys, member: member, taken: taken, job: job, unit: unit, originalTransactionID: originalTransactionID,
            subscription: subscription, recheck: recheck, now: now)
    }

    package mutating func declare(_ needed: RedisReply) throws { try call.declare(needed, script: Self.name) }

    /// `reinstated`, `refund_forgotten`, `not_revoked` when it moved.
    package static func decode(_ reply: RedisReply) throws -> (TransitionResult, String?) {
        try RefundStepCall.decode(reply, script: name, results: ["reinstated", "refund_forgotten", "not_revoked"])
    }
}
