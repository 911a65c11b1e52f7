extension VerifiedReceipt {
    /// A verifyReceipt answer read as a re-check of one subscription: its periods since the one
    /// we know ends (`knownExpiresAt`) and the three before it (oldest first, the latest last) and its state now from the latest period and
    /// `pending_renewal_info` (a receipt carries no signed date: `now` orders it). `nil` when the
    /// answer does not list the subscription.
    public func recheck(of originalTransactionID: String, knownExpiresAt: Int64?, now: Int64) -> VerifiedReceipt? {
        let periods = transactions.filter { $0.originalTransactionID == originalTransactionID && $0.expiresDateMs != nil }
            .sorted { (Int64($0.expiresDateMs ?? "") ?? 0) < (Int64($1.expiresDateMs ?? "") ?? 0) }
        guard let latest = periods.last, let expires = Int64(latest.expiresDateMs ?? "") else { return nil }
        let length = max(expires - (Int64(latest.purchaseDateMs ?? "") ?? expires), 0)
        let after = (knownExpiresAt ?? expires) - 3 * length
        let pending = pendingRenewals.first { $0.originalTransactionID == originalTransactionID }
        let status: String
        if latest.isRefunded {
            status = "revoked"
        } else if expires > now {
            status = "active"
        } else if pending?.isInBillingRetryPeriod == true {
            status = (pending?.gracePeriodExpiresDateMs ?? 0) > now ? "grace_period" : "billing_retry"
        } else {
            status = "expired"
        }
        var answer = VerifiedReceipt(
            environment: environment, bundleID: bundleID,
            transactions: periods.filter { (Int64($0.expiresDateMs ?? "") ?? 0) > after || $0.transactionID == latest.transactionID })
        answer.renewal = SubscriptionRenewal(
            originalTransactionID: originalTransactionID, status: status, autoRenew: pending?.autoRenewStatus,
            graceExpiresAt: pending?.gracePeriodExpiresDateMs, signedAt: now, expirationIntent: pending?.expirationIntent)
        return answer
    }
}
