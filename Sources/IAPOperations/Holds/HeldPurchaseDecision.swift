import IAPStages
import PipelineCore
import PlainJSON
import RedisClient

/// What `release_held_purchase` and `reject_held_purchase` share: the hold's own keys first, its
/// arguments, and the decoding of their replies. The keys that follow from the hold (its user,
/// original transaction) are declared once the release has named them.
struct HeldPurchaseDecision: Sendable {
    let redisKeys: RedisKeys
    let unit: String
    let originalTransactionID: String
    /// The step's time (ms): its day's figures are the ones a release counts in.
    let now: Int64
    var members: JSONObject

    init(
        _ keys: RedisKeys, unit: String, originalTransactionID: String, by operatorName: String, note: String,
        recheck: RecheckSchedule?, now: Int64
    ) {
        redisKeys = keys
        self.unit = unit
        self.originalTransactionID = originalTransactionID
        self.now = now
        members = [
            "now": .string(String(now)), "operator": .string(operatorName), "note": .string(note),
        ]
        if let recheck { members["recheck"] = recheck.json }
    }

    var argument: String { JSONValue.object(members).canonicalText }

    /// The hold as the script named it (`{-2, hold}`).
    struct Named {
        var ticket: String
        var userID: String
        var originalTransactionID: String
    }

    mutating func named(_ needed: RedisReply, script: String) throws -> Named {
        let hold = try needed.json(script: script)
        guard let ticket = hold["ticket"]?.string else { throw ScriptReplyError(script: script, reply: needed) }
        let named = Named(
            ticket: ticket, userID: hold["user_id"]?.string ?? "", originalTransactionID: hold["original_transaction_id"]?.string ?? "")
        members["ticket"] = .string(named.ticket)
        members["user_id"] = .string(named.userID)
        members["original_transaction_id"] = .string(named.originalTransactionID)
        return named
    }

    static func decode(_ reply: RedisReply, script: String, decisions: Set<String>) throws -> HeldPurchaseResult {
        guard let items = reply.array, let code = items.first?.int else { throw ScriptReplyError(script: script, reply: reply) }
        switch (code, items.count > 1 ? items[1].string : nil) {
        case (1, let decision?) where decisions.contains(decision): return .decided(decision)
        case (0, let status?): return .alreadyDecided(status)
        case (-1, nil): return .notFound
        default: throw ScriptReplyError(script: script, reply: reply)
        }
    }
}

/// `release_held_purchase`: an operator grants a held purchase once (or rejects it when Apple
/// refunded it meanwhile).
package struct ReleaseHeldPurchase: DeclaringScript {
    package static let script = LuaSource.script("release_held_purchase")
    private var decision: HeldPurchaseDecision
    package private(set) var keys: [String]
    package private(set) var arguments: [String]

    package init(
        _ keys: RedisKeys, unit: String, originalTransactionID: String, by operatorName: String, note: String,
        recheck: RecheckSchedule?, now: Int64
    ) {
        decision = HeldPurchaseDecision(
            keys, unit: unit, originalTransactionID: originalTransactionID, by: operatorName, note: note, recheck: recheck, now: now)
        self.keys = Self.holdKeys(keys, unit: unit, originalTransactionID: originalTransactionID)
        arguments = [decision.argument]
    }

    private static func holdKeys(_ keys: RedisKeys, unit: String, originalTransactionID original: String) -> [String] {
        let bucket = keys.ofPurchase(originalTransactionID: original)
        return [
            keys.hold(unit: unit, originalTransactionID: original), bucket.holds, keys.claim(unit: unit, originalTransactionID: original),
            keys.grant(unit: unit, originalTransactionID: original), keys.refunded(unit: unit, originalTransactionID: original),
            bucket.fulfilment,
        ]
    }

    package mutating func declare(_ needed: RedisReply) throws {
        let hold = try decision.named(needed, script: Self.name)
        let k = decision.redisKeys
        let bucket = k.ofPurchase(originalTransactionID: hold.originalTransactionID)
        keys = Self.holdKeys(k, unit: decision.unit, originalTransactionID: decision.originalTransactionID) + [
            k.owner(originalTransactionID: hold.originalTransactionID), bucket.unclaimed,
            bucket.lifetime(user: hold.userID), k.subscription(originalTransactionID: hold.originalTransactionID),
            bucket.rechecks, bucket.subscriptions(user: hold.userID), bucket.purchases(user: hold.userID),
            bucket.refundsProrated(user: hold.userID), bucket.userEvents, bucket.figures(day: FigureDay(milliseconds: decision.now)),
            bucket.subscribers,
        ]
        arguments = [decision.argument]
    }

    package static func decode(_ reply: RedisReply) throws -> HeldPurchaseResult {
        try HeldPurchaseDecision.decode(reply, script: name, decisions: ["released", "rejected"])
    }
}

/// `reject_held_purchase`: an operator rejects a held purchase: never granted, to anyone.
package struct RejectHeldPurchase: PipelineScript {
    package static let script = LuaSource.script("reject_held_purchase")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, unit: String, originalTransactionID original: String, by operatorName: String, note: String, now: Int64) {
        let bucket = keys.ofPurchase(originalTransactionID: original)
        self.keys = [keys.hold(unit: unit, originalTransactionID: original), bucket.holds, bucket.fulfilment, bucket.userEvents]
        arguments = [
            HeldPurchaseDecision(keys, unit: unit, originalTransactionID: original, by: operatorName, note: note, recheck: nil, now: now)
                .argument
        ]
    }

    package static func decode(_ reply: RedisReply) throws -> HeldPurchaseResult {
        try HeldPurchaseDecision.decode(reply, script: name, decisions: ["rejected"])
    }
}

/// `settle_held_ticket`: after an operator's decision, the hold's ticket gives the purchase its
/// new outcome (the ticket lies in the bucket its id names, the hold in its purchase's).
package struct SettleHeldTicket: PipelineScript {
    package static let script = LuaSource.script("settle_held_ticket")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, ticket: String, transactionID: String, outcome: PurchaseOutcome, reason: String, now: Int64) {
        self.keys = [keys.ticket(ticket)]
        arguments = [JSONValue.object([
            "ticket": .string(ticket), "transaction_id": .string(transactionID), "outcome": .string(outcome.rawValue),
            "reason": .string(reason), "now": .string(String(now)), "channel": .string(keys.results(ofTicket: ticket)),
        ]).canonicalText]
    }

    /// 1 told, 0 told before, -1 the ticket is gone.
    package static func decode(_ reply: RedisReply) throws -> Int {
        guard let code = reply.int, (-1...1).contains(code) else { throw ScriptReplyError(script: name, reply: reply) }
        return Int(code)
    }
}
