import ClusterHarness

/// One trial's books: the four numbers that must be 0, and what the trial did.
public struct TrialReport: Codable, Sendable {
    public var trial: Int
    public var receipts: Int
    public var accepted: Int
    /// 503s and broken connections the client met before its receipts were accepted.
    public var refusals: Int
    public var faults: [FaultKind: Int]
    /// Jobs the SIGTERMed processes held when signalled.
    public var jobsHeldAtSigterm: Int
    /// StoreKit 2 submissions: signed transactions and transaction-id lookups (refunded ones included).
    public var storeKit: Int = 0
    /// Refunded purchases: granted then revoked once, and refused because the refund came first.
    public var refundsRevoked: Int = 0
    public var refundsBeforeGrant: Int = 0
    /// Purchases the daily cap held, released once the trial drained (each granted once).
    public var held: Int = 0
    /// Subscriptions apple-sim renewed during the trial, and their periods granted once to their subscriber.
    public var subscriptions: Int = 0
    public var periods: Int = 0
    /// Fulfilment events the webhook receiver got (each at least once), and how many times again.
    public var webhookDelivered: Int = 0
    public var webhookRedelivered: Int = 0
    /// Each forced failover, in order.
    public var failovers: [FailoverTiming] = []
    /// Each move of the pipeline's slot, in order.
    public var reshards: [LocalCluster.Reshard] = []
    /// Notifications apple-sim signed in the trial, and those no attempt of Apple's delivered
    /// (each stored all the same, from the history by the sweep, or the trial counts it lost).
    public var notificationsSent: Int = 0
    public var notificationsUndelivered: Int = 0
    /// Players with two years of history adopted (half imported first), and purchases made
    /// before the cutover that were granted all the same (must be 0).
    public var adoptionPlayers: Int = 0
    public var grantedBeforeCutover: Int = 0
    public var poisonPushed: Int
    public var poisonDeadLettered: Int
    /// Accepted tickets that never reached a terminal state.
    public var lost: Int
    /// Grant units with more than one fulfilment entry, or more than one granted ticket.
    public var doubleGrants: Int
    /// Jobs still in a queue, an in-flight list or the retry set after the drain.
    public var stuck: Int
    /// Terminal states other than the receipt's scenario dictates.
    public var wrongOutcomes: Int
    /// Crashes, unclean SIGTERM exits, receipts the intake refused for good.
    public var anomalies: Int
    public var drainSeconds: Double
    /// The first few findings, to start an investigation from.
    public var examples: [String]

    public var passed: Bool {
        lost == 0 && doubleGrants == 0 && stuck == 0 && wrongOutcomes == 0 && anomalies == 0 && grantedBeforeCutover == 0
    }
}
