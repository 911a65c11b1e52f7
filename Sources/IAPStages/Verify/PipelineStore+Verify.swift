import AppleReceipt
import PipelineCore

/// The verify stage's steps: `mark_verifying`, and a re-check's answer as a subscription change.
extension PipelineStore {
    /// Shows `verifying` on the tickets; returns those whose hash is gone.
    package func markVerifying(tickets: [String], now: Int64 = currentTimeMs()) async throws -> Set<String> {
        if tickets.isEmpty { return [] }
        let found = try await run(MarkVerifying(keys, tickets: tickets, now: now))
            .onePerItem(of: tickets.count, script: MarkVerifying.name)
        return Set(zip(tickets, found).filter { !$0.1 }.map(\.0))
    }

    /// Returns `false` when the ticket hash is gone.
    package func markVerifying(ticket: String, now: Int64 = currentTimeMs()) async throws -> Bool {
        try await markVerifying(tickets: [ticket], now: now).isEmpty
    }

    /// A re-check's answer as the subscription's new state: the status Apple gives, the latest
    /// period's end and transaction, credited to the record's owner.
    static func recheckChange(
        _ renewal: SubscriptionRenewal, latest: InAppTransaction?, environment: String, purchases: [Purchase]
    ) -> SubscriptionChange {
        let line = purchases.first { $0.transactionID == latest?.transactionID }
        var change = SubscriptionChange(
            originalTransactionID: renewal.originalTransactionID, productID: latest?.productID, status: renewal.status,
            expiresAt: latest?.expiresDateMs.flatMap { Int64($0) }, graceExpiresAt: renewal.graceExpiresAt, signedAt: renewal.signedAt,
            cause: "recheck", transactionID: latest?.transactionID, entitlements: line?.entitlements ?? [],
            environment: environment, autoRenew: renewal.autoRenew, source: "recheck")
        change.appTransactionID = latest?.appTransactionID
        change.eligibleWinBackOfferIDs = renewal.eligibleWinBackOfferIDs
        change.historyRevision = renewal.historyRevision
        change.renewalPlan = renewal.renewalPlan
        if renewal.status == "expired" { change.expirationReason = ExpirationReason.of(intent: renewal.expirationIntent) }
        return change
    }
}
