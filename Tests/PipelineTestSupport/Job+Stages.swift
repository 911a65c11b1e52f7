import AppleReceipt
import PipelineCore

extension Job {
    /// The job as the verify stage forwards it: on to dedupe with Apple's answer.
    package func movedToDedupe(with receipt: VerifiedReceipt?, appleAccount: String? = nil) -> Job {
        var next = self
        next.stage = .dedupe
        next.work = .dedupe(Job.Verified(
            receipt: receipt, appleAccount: appleAccount, currency: toVerify?.currency, productID: toVerify?.productID,
            transactionID: toVerify?.transactionID))
        return next
    }

    /// The job as the dedupe stage forwards it: on to grant with `purchases` claimed from `receipt`.
    package func movedToGrant(
        _ purchases: [Purchase], in receipt: VerifiedReceipt?, sharing: SharingPolicy? = nil, refundLimit: Int? = nil,
        appleAccountLimit: Int? = nil, subscriptionReceipt: String? = nil
    ) -> Job {
        var next = self
        next.stage = .grant
        next.work = .grant(Job.Claimed(
            purchases: purchases, receipt: receipt, refundLimit: refundLimit, appleAccountLimit: appleAccountLimit, sharing: sharing,
            subscriptionReceipt: subscriptionReceipt))
        return next
    }
}

extension Job {
    /// A grant job's purchases (none for another kind).
    package var grantPurchases: [Purchase] { claimed?.purchases ?? [] }
}
