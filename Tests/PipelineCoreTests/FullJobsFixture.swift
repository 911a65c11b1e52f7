import AppleReceipt
@testable import PipelineCore

/// Jobs with every member their kinds can carry set (the escapes and the numbers' edges too).
enum FullJobs {
    static var transaction: InAppTransaction {
        var full = InAppTransaction(
            transactionID: "2000000000000009", originalTransactionID: "2000000000000001", productID: "pro.monthly", quantity: 3,
            webOrderLineItemID: "wol-1", purchaseDateMs: "1700000000000", cancellationDateMs: "1700000000500")
        full.originalPurchaseDateMs = "1690000000000"
        full.expiresDateMs = "1702600000000"
        full.signedDateMs = "1700000000001"
        full.appAccountToken = "0f0e-\"quoted\"\\back\nline\u{01}"
        full.appTransactionID = "705"
        full.inAppOwnershipType = "FAMILY_SHARED"
        full.currency = "JPY"
        full.storefront = "JPN"
        full.price = "-120"
        full.offerType = "2"
        full.offerIdentifier = "WIN-BACK é ✓"
        full.offerDiscountType = "FREE_TRIAL"
        full.offerPeriod = "P1W"
        full.billingPlanType = "MONTHLY"
        full.commitmentPeriod = "P1M"
        full.commitmentPeriods = "12"
        full.commitmentExpiresDateMs = "1730000000000"
        full.commitmentPrice = "9990"
        return full
    }

    static var renewal: SubscriptionRenewal {
        var renewal = SubscriptionRenewal(
            originalTransactionID: "2000000000000001", status: "grace", autoRenew: 0, graceExpiresAt: -9_223_372_036_854_775_808,
            signedAt: 9_223_372_036_854_775_807, expirationIntent: 2)
        renewal.eligibleWinBackOfferIDs = ["wb-1", "wb/2"]
        renewal.historyRevision = "hr:9"
        renewal.renewalPlan = []
        return renewal
    }

    static var purchase: Purchase {
        var purchase = Purchase(
            transactionID: "2000000000000009", originalTransactionID: "2000000000000001", productID: "pro.monthly", quantity: -1,
            unit: "2000000000000001:1702600000000", outcome: .held, reason: "daily_limit")
        purchase.currency = "JPY"
        purchase.dailyLimit = 0
        purchase.kind = "auto_renewable"
        purchase.consumable = false
        purchase.entitlements = ["pro", "ad_free", "\u{1f}"]
        purchase.expiresAt = 1_702_600_000_000
        purchase.signedAt = 0
        purchase.adopt = true
        purchase.transaction = transaction
        return purchase
    }

    static var jobs: [Job] {
        var verify = Job(
            ticket: "T-full", userID: "ü\t\"", receiptData: "MIIT+/==", productID: "pro.monthly", transactionID: "2000000000000009",
            enqueuedAt: -5)
        verify.attempts = 12
        verify.source = "import"
        verify.bundleID = "com.example.game"
        verify.part = "7.T-full"
        verify.appleFailedAt = 1_700_000_000_999
        if case .verify(var work) = verify.work {
            work.currency = "JPY"
            work.dryRun = true
            verify.work = .verify(work)
        }
        var lookup = verify
        lookup.work = .verify(Job.ToVerify(evidence: .transactionLookup("44"), productID: nil, transactionID: "44"))
        var app = verify
        app.work = .verify(Job.ToVerify(evidence: .appTransaction("eyJ.app.sig"), productID: nil, transactionID: nil))

        var receipt = VerifiedReceipt(
            environment: "Sandbox", bundleID: "com.example.game",
            transactions: [transaction, InAppTransaction(transactionID: "1", productID: "coins")])
        receipt.renewal = renewal
        var dedupe = verify
        dedupe.stage = .dedupe
        var verified = Job.Verified(receipt: receipt, appleAccount: "705", dryRun: true)
        verified.historyRevision = "hr:9"
        verified.subscriptionReceipt = "MIIsub=="
        verified.currency = "JPY"
        verified.productID = "pro.monthly"
        verified.transactionID = "2000000000000009"
        dedupe.work = .dedupe(verified)

        var grant = verify
        grant.stage = .grant
        var claimed = Job.Claimed(
            purchases: [purchase, Purchase(transactionID: "1", originalTransactionID: "1", productID: "coins", quantity: 1, unit: nil, outcome: .rejected)],
            receipt: receipt, refundLimit: 3, appleAccountLimit: 2, sharing: SharingPolicy.allCases.first, subscriptionReceipt: "MIIsub==")
        claimed.purchases[0].transaction = transaction
        grant.work = .grant(claimed)
        var bare = grant
        bare.work = .grant(Job.Claimed(purchases: [], receipt: nil))
        return [verify, lookup, app, dedupe, grant, bare]
    }
}
