import AppleReceipt

extension Job {
    /// One job's work, of the kind its stage does: evidence to verify, Apple's verified answer to
    /// claim from, claimed purchases to grant, a notification or an errand to Apple to carry out,
    /// a webhook delivery. Indirect: one boxed reference, so a job is copied (into a handler, a
    /// forward, the next job) by one retain, not field by field through every case's payload
    /// (callgrind: about 1.3 thousand instructions a copy, 13 thousand a dedupe job).
    package indirect enum Work: Sendable, Equatable {
        case verify(ToVerify)
        case dedupe(Verified)
        case grant(Claimed)
        /// For the notify stage: an App Store Server Notification, verified at the door.
        case notification(VerifiedNotification)
        /// For the notify stage: an app account token to set at Apple.
        case setAppAccountToken(AppAccountTokenRequest)
        /// For the notify stage: a granted consumable to finish at Apple.
        case finishTransaction(FinishTransactionRequest)
        /// For the webhook stage: a user's delivery (the head of their list), or a replayed one's
        /// single event (JSON: `id`, `fields`); to the destination named (`nil`: the default,
        /// `IAP_WEBHOOK_URL`'s).
        case delivery(event: String?, destination: String? = nil)
    }

    /// A verify job's work: the evidence, and what the client says it bought.
    package struct ToVerify: Sendable, Equatable {
        package var evidence: Evidence
        package var productID: String?
        /// With a receipt or signed transaction: the client's word; alone, the evidence.
        package var transactionID: String?
        /// The currency the client says a legacy receipt's purchases were paid in (ISO 4217).
        package var currency: String?
        /// A sync's dry run (`"dry_run": true`): Apple's whole history is read and what a sync
        /// would do with each purchase is put on the ticket (result `dry_run`); nothing is
        /// claimed, seated or granted, and the account's history revision is not kept.
        package var dryRun: Bool

        package init(
            evidence: Evidence, productID: String? = nil, transactionID: String? = nil, currency: String? = nil, dryRun: Bool = false
        ) {
            self.evidence = evidence
            self.productID = productID
            self.transactionID = transactionID
            self.currency = currency
            self.dryRun = dryRun
        }
    }

    /// A dedupe job's work: Apple's verified answer (`receipt`), or only an Apple Account to bind
    /// to the user (`receipt` `nil`), with what the client said.
    package struct Verified: Sendable, Equatable {
        package var receipt: VerifiedReceipt?
        /// The verified `appTransactionId` the user takes a seat on (a sync, an app transaction).
        package var appleAccount: String?
        /// A sync's read of Apple's history reached this revision: dedupe keeps it on the Apple
        /// Account once the purchases read are claimed (never before: a next sync reads from it).
        package var historyRevision: String?
        /// A legacy receipt that proves a subscription, carried to grant, which stores it on the
        /// subscription's record for re-checks by `verifyReceipt`.
        package var subscriptionReceipt: String?
        /// A legacy receipt's currency as the client said it (signed evidence carries its own).
        package var currency: String?
        package var productID: String?
        package var transactionID: String?
        package var dryRun: Bool

        package init(
            receipt: VerifiedReceipt?, appleAccount: String? = nil, historyRevision: String? = nil, subscriptionReceipt: String? = nil,
            currency: String? = nil, productID: String? = nil, transactionID: String? = nil, dryRun: Bool = false
        ) {
            self.receipt = receipt
            self.appleAccount = appleAccount
            self.historyRevision = historyRevision
            self.subscriptionReceipt = subscriptionReceipt
            self.currency = currency
            self.productID = productID
            self.transactionID = transactionID
            self.dryRun = dryRun
        }
    }

    /// A grant job's work: the purchases dedupe claimed (each with its fate and Apple's word on
    /// it), what the verified answer said of them all, and the purchase policy's limits as dedupe
    /// read them. The receipt stops at dedupe.
    package struct Claimed: Sendable, Equatable {
        package var purchases: [Purchase]
        /// The verified answer's environment (`Production`, `Sandbox`); `nil`: no answer (a binding).
        package var environment: String?
        /// The app the verified answer is for: its Server API client sets tokens and finishes.
        package var appBundleID: String?
        /// A subscription's state in the answer (a re-check's), and its latest period: grant
        /// applies it to the subscription's record.
        package var renewal: SubscriptionRenewal?
        package var renewalPeriod: InAppTransaction?
        /// `IAP_MAX_REFUNDS_PER_USER`: grant holds new purchases of a user with this many refunds.
        package var refundLimit: Int?
        /// `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT`.
        package var appleAccountLimit: Int?
        /// `IAP_SHARING_POLICY`: what grant does when another user holds the grant of a
        /// non-consumable or subscription this job proves (`nil`: a sync, which moves nothing).
        package var sharing: SharingPolicy?
        package var subscriptionReceipt: String?

        /// `purchases` claimed from `receipt`: each given the receipt's transaction of its id
        /// (the first listed), and the answer's environment, app and renewal taken once.
        package init(
            purchases: [Purchase], receipt: VerifiedReceipt?, refundLimit: Int? = nil, appleAccountLimit: Int? = nil,
            sharing: SharingPolicy? = nil, subscriptionReceipt: String? = nil
        ) {
            self.purchases = receipt.map { Self.stamped(purchases, from: $0) } ?? purchases
            environment = receipt?.environment
            appBundleID = receipt?.bundleID
            renewal = receipt?.renewal
            renewalPeriod = receipt?.renewal.flatMap { renewal in
                receipt?.transactions.last { $0.originalTransactionID == renewal.originalTransactionID }
            }
            self.refundLimit = refundLimit
            self.appleAccountLimit = appleAccountLimit
            self.sharing = sharing
            self.subscriptionReceipt = subscriptionReceipt
        }

        private static func stamped(_ purchases: [Purchase], from receipt: VerifiedReceipt) -> [Purchase] {
            var byID: [String: InAppTransaction] = [:]
            for transaction in receipt.transactions where byID[transaction.transactionID] == nil {
                byID[transaction.transactionID] = transaction
            }
            return purchases.map { purchase in
                var purchase = purchase
                purchase.transaction = purchase.transaction ?? byID[purchase.transactionID]
                return purchase
            }
        }

        /// The verified answer again, narrowed to the transactions of this job's purchases, for
        /// dedupe to decide the same purchases again; `nil` for a job without an answer.
        package var narrowedReceipt: VerifiedReceipt? {
            guard let environment else { return nil }
            return VerifiedReceipt(
                environment: environment, bundleID: appBundleID ?? "", transactions: purchases.compactMap(\.transaction), renewal: renewal)
        }
    }
}
