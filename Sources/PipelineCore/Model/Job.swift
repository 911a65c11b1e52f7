import AppleReceipt
import Foundation

/// A job as it sits in a queue: JSON, one per ticket. Its exact bytes identify it in in-flight
/// lists, so a job is re-encoded only when it moves on.
package struct Job: Codable, Sendable, Equatable {
    package var ticket: String
    package var stage: Stage
    package var userID: String
    /// The evidence, one of three (see `evidence`); dropped once verified, later stages do not need it.
    /// The base64 app receipt.
    package var receiptData: String?
    /// A StoreKit 2 signed transaction (compact JWS).
    package var signedTransaction: String?
    /// What the client says it bought, if it said. With neither receipt nor signed transaction,
    /// `transactionID` is the evidence: the verifier looks it up with the App Store Server API.
    package var productID: String?
    package var transactionID: String?
    /// A StoreKit `AppTransaction` (compact JWS): the evidence of who the Apple Account is, with
    /// nothing bought; the verify stage reads its `appTransactionId` into `appleAccount`.
    package var signedAppTransaction: String?
    /// The verified `appTransactionId` of a signed app transaction, which dedupe binds to the user.
    package var appleAccount: String?
    /// The currency the client says a legacy receipt's purchases were paid in (ISO 4217); the
    /// verify stage drops it for signed evidence, whose own `currency` Apple signed.
    package var currency: String?
    /// The app the client named (`bundle_id`): Apple is asked with its secret or key alone, and
    /// the evidence must be of it; `nil`: whichever accepted app it is.
    package var bundleID: String?
    /// Where the evidence came from: `client` (absent) or `notification` (Apple told us).
    package var source: String?
    /// A legacy receipt that proves a subscription, carried from verify to grant, which stores it
    /// on the subscription's record for re-checks by `verifyReceipt`.
    package var subscriptionReceipt: String?
    /// For a replayed webhook delivery: the one event to deliver (JSON: `id`, `fields`); a user's
    /// delivery job has none and delivers the head of the user's list.
    package var webhookEvent: String?
    /// The `source` of a sync's job (`POST /v1/users/{id}/sync`): its grants carry it too.
    package static let syncSource = "sync"
    /// An operator's sync (`iapctl user sync`), which names the Apple Account (`appleAccount`)
    /// without its signed app transaction: the environment whose history is read.
    package var syncEnvironment: String?
    /// A sync's dry run (`"dry_run": true`): Apple's whole history is read and what a sync would
    /// do with each purchase is put on the ticket (result `dry_run`); nothing is claimed, seated
    /// or granted, and the account's history revision is not kept.
    package var dryRun: Bool?
    /// A sync's read of Apple's history reached this revision: dedupe keeps it on the Apple
    /// Account once the purchases read are claimed (never before: a next sync reads from it).
    package var historyRevision: String?
    /// For a re-check job (`source` `recheck`): the subscription to ask Apple about; the evidence.
    package var recheck: RecheckRequest?
    /// For the notify stage: the notification, verified at the door.
    package var notification: VerifiedNotification?
    /// For the notify stage, instead of a notification: an app account token to set at Apple.
    package var appAccountTokenRequest: AppAccountTokenRequest?
    /// For the notify stage, instead of a notification: a granted consumable to finish at Apple.
    package var finishTransactionRequest: FinishTransactionRequest?
    /// Verification attempts made so far.
    package var attempts: Int
    package var enqueuedAt: Int64
    /// Set by the verify stage.
    package var receipt: VerifiedReceipt?
    /// Set by the dedupe stage.
    package var purchases: [Purchase]?
    /// Set by the dedupe stage from `IAP_MAX_REFUNDS_PER_USER`: the grant stage holds new
    /// purchases of a user with this many refunds and revocations.
    package var refundLimit: Int?
    /// The purchase policy's `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT`, for the grant stage.
    package var appleAccountLimit: Int?
    /// Set by the dedupe stage from `IAP_SHARING_POLICY`: what the grant stage does when another
    /// user holds the grant of a non-consumable or subscription this job proves.
    package var sharing: SharingPolicy?
    /// Set by the dedupe stage on one part of a receipt whose purchases lie in several buckets
    /// (`IAP_BUCKETS`): the part's own id, `<bucket>.<ticket>`, whose hash stands for the ticket
    /// in the part's steps (the client's ticket lives in another bucket); `ticket` stays the
    /// client's, on claims, grant records and fulfilment events.
    package var part: String?
    /// When Apple last failed this job (Redis's ms, `record_apple_failure`): its next Apple-side
    /// failure spends an attempt only if Apple answered someone since.
    package var appleFailedAt: Int64?

    /// The ticket whose hash this job's steps check and update: its part's, else its own.
    package var ownTicket: String { part ?? ticket }

    package init(
        ticket: String, userID: String, receiptData: String?, signedTransaction: String? = nil, productID: String?,
        transactionID: String?, enqueuedAt: Int64
    ) {
        self.ticket = ticket
        self.stage = .verify
        self.userID = userID
        self.receiptData = receiptData
        self.signedTransaction = signedTransaction
        self.productID = productID
        self.transactionID = transactionID
        self.attempts = 0
        self.enqueuedAt = enqueuedAt
    }

    enum CodingKeys: String, CodingKey {
        case ticket, stage
        case userID = "user_id"
        case receiptData = "receipt_data"
        case signedTransaction = "signed_transaction"
        case signedAppTransaction = "signed_app_transaction"
        case appleAccount = "apple_account"
        case productID = "product_id"
        case transactionID = "transaction_id"
        case attempts
        case enqueuedAt = "enqueued_at"
        case receipt, purchases, source, notification, currency
        case refundLimit = "refund_limit"
        case appleAccountLimit = "apple_account_limit"
        case sharing, recheck, part
        case appleFailedAt = "apple_failed_at"
        case subscriptionReceipt = "subscription_receipt"
        case webhookEvent = "webhook_event"
        case appAccountTokenRequest = "set_app_account_token"
        case finishTransactionRequest = "finish_transaction"
        case bundleID = "bundle_id"
        case syncEnvironment = "sync_environment"
        case dryRun = "dry_run"
        case historyRevision = "history_revision"
    }

    /// What the verify stage checks: the first of receipt, signed transaction, transaction id,
    /// subscription to re-check.
    package var evidence: Evidence? {
        if let receiptData { return .receipt(receiptData) }
        if let signedTransaction { return .signedTransaction(signedTransaction) }
        if let signedAppTransaction { return .appTransaction(signedAppTransaction) }
        if let transactionID { return .transactionLookup(transactionID) }
        if let recheck { return .recheck(recheck) }
        if source == Self.syncSource, let appleAccount, receipt == nil { return .accountSync(appleAccount) }
        return nil
    }

    package enum Evidence: Sendable, Equatable {
        case receipt(String)
        case signedTransaction(String)
        case appTransaction(String)
        case transactionLookup(String)
        case recheck(RecheckRequest)
        /// An operator's sync of an Apple Account (`iapctl user sync`): no signed evidence.
        case accountSync(String)
    }
}
