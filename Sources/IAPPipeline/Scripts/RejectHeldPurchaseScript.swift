import RedisClient

extension PipelineScripts {
    /// An operator rejects a held purchase: never granted (its claim stays with its ticket, so no
    /// other account is granted it either), one `rejected` entry on the fulfilment stream with
    /// `source=operator`, the hold records the decision and leaves the index, and the ticket shows
    /// the purchase rejected with the rule that held it.
    /// KEYS: hold, holds index, claim key, grant key, refund marker, fulfilment stream.
    /// ARGV[1]: `HeldPurchaseDecisionArguments` as JSON.
    /// Returns `{1, "rejected"}`, `{0, status}` when decided already, `{-1}` when no such hold.
    static let rejectHeldPurchase = RedisScript(name: "reject_held_purchase", source: "local recheckPolicy\n" + HeldPurchaseDecision.readHold + "\n" + """
        \(HeldPurchaseDecision.settle)
        redis.call('XADD', KEYS[6], '*', 'event', 'rejected', 'source', 'operator', 'operator', a.operator,
          \(HeldPurchaseDecision.entryFields), 'reason', h.reason, 'rejected_at', a.now)
        return {1, settle('rejected', h.reason)}
        """)
}
