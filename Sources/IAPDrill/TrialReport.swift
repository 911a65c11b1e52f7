import ClusterHarness

/// One trial's books: the four numbers that must be 0, and what the trial did.
package struct TrialReport: Codable, Sendable {
    package var trial: Int
    package var receipts: Int
    package var accepted: Int
    /// 503s and broken connections the client met before its receipts were accepted.
    package var refusals: Int
    package var faults: [FaultKind: Int]
    /// Jobs the SIGTERMed processes held when signalled.
    package var jobsHeldAtSigterm: Int
    /// StoreKit 2 submissions: signed transactions and transaction-id lookups (refunded ones included).
    package var storeKit: Int = 0
    /// Refunded purchases: granted then revoked once, and refused because the refund came first.
    package var refundsRevoked: Int = 0
    package var refundsBeforeGrant: Int = 0
    /// Purchases the daily cap held, released once the trial drained (each granted once).
    package var held: Int = 0
    /// Subscriptions apple-sim renewed during the trial, and their periods granted once to their subscriber.
    package var subscriptions: Int = 0
    package var periods: Int = 0
    /// Fulfilment events the webhook receiver got (each at least once), and how many times again.
    package var webhookDelivered: Int = 0
    package var webhookRedelivered: Int = 0
    /// Each forced failover, in order.
    package var failovers: [FailoverTiming] = []
    /// Each move of the pipeline's slot, in order.
    package var reshards: [LocalCluster.Reshard] = []
    /// Notifications apple-sim signed in the trial, and those no attempt of Apple's delivered
    /// (each stored all the same, from the history by the sweep, or the trial counts it lost).
    package var notificationsSent: Int = 0
    package var notificationsUndelivered: Int = 0
    /// Players with two years of history adopted (half imported first), and purchases made
    /// before the cutover that were granted all the same (must be 0).
    package var adoptionPlayers: Int = 0
    package var grantedBeforeCutover: Int = 0
    package var poisonPushed: Int
    package var poisonDeadLettered: Int
    /// Accepted tickets that never reached a terminal state.
    package var lost: Int
    /// Grant units with more than one fulfilment entry, or more than one granted ticket.
    package var doubleGrants: Int
    /// Jobs still in a queue, an in-flight list or the retry set after the drain.
    package var stuck: Int
    /// Terminal states other than the receipt's scenario dictates.
    package var wrongOutcomes: Int
    /// Crashes, unclean SIGTERM exits, receipts the intake refused for good.
    package var anomalies: Int
    package var drainSeconds: Double
    /// The first few findings, to start an investigation from.
    package var examples: [String]

    package var passed: Bool {
        lost == 0 && doubleGrants == 0 && stuck == 0 && wrongOutcomes == 0 && anomalies == 0 && grantedBeforeCutover == 0
    }
}
