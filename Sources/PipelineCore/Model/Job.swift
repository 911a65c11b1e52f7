import AppleReceipt

/// A job as it sits in a queue: an envelope every job has, and one typed piece of work of the kind
/// its stage does. JSON on the wire (`Job+JSON.swift`), one per ticket; its exact bytes identify
/// it in in-flight lists, so a job is re-encoded only when it moves on.
package struct Job: Sendable, Equatable {
    package var ticket: String
    package var stage: Stage
    package var userID: String
    /// Attempts made so far (of verification, or of the stage's call to Apple or the webhook).
    package var attempts: Int
    package var enqueuedAt: Int64
    /// Where the work came from: the client (absent), `notification`, `sync`, `recheck`, an errand's.
    package var source: String?
    /// The app the client named (`bundle_id`): Apple is asked with its secret or key alone, and
    /// the evidence must be of it; `nil`: whichever accepted app it is.
    package var bundleID: String?
    /// Set by the dedupe stage on one part of a receipt whose purchases lie in several buckets
    /// (`IAP_BUCKETS`): the part's own id, `<bucket>.<ticket>`, whose hash stands for the ticket
    /// in the part's steps (the client's ticket lives in another bucket); `ticket` stays the
    /// client's, on claims, grant records and fulfilment events.
    package var part: String?
    /// When Apple last failed this job (Redis's ms, `record_apple_failure`): its next Apple-side
    /// failure spends an attempt only if Apple answered someone since.
    package var appleFailedAt: Int64?
    /// What the job carries for its stage to work on.
    package var work: Work

    package init(ticket: String, stage: Stage, userID: String, work: Work, source: String? = nil, enqueuedAt: Int64) {
        self.ticket = ticket
        self.stage = stage
        self.userID = userID
        self.work = work
        self.source = source
        self.attempts = 0
        self.enqueuedAt = enqueuedAt
    }

    /// A client's verify job: a receipt, else a signed transaction, else a transaction id to look up.
    package init(
        ticket: String, userID: String, receiptData: String?, signedTransaction: String? = nil, productID: String?,
        transactionID: String?, enqueuedAt: Int64
    ) {
        let evidence: Evidence
        if let receiptData {
            evidence = .receipt(receiptData)
        } else if let signedTransaction {
            evidence = .signedTransaction(signedTransaction)
        } else if let transactionID {
            evidence = .transactionLookup(transactionID)
        } else {
            preconditionFailure("a client's job carries a receipt, a signed transaction or a transaction id")
        }
        let work = ToVerify(evidence: evidence, productID: productID, transactionID: transactionID)
        self.init(ticket: ticket, stage: .verify, userID: userID, work: .verify(work), enqueuedAt: enqueuedAt)
    }

    /// The ticket whose hash this job's steps check and update: its part's, else its own.
    package var ownTicket: String { part ?? ticket }

    /// The `source` of a sync's job (`POST /v1/users/{id}/sync`): its grants carry it too.
    package static let syncSource = "sync"

    /// What the verify stage checks (`nil`: not a verify job).
    package var toVerify: ToVerify? {
        if case .verify(let work) = work { return work }
        return nil
    }

    /// What the dedupe stage claims from (`nil`: not a dedupe job).
    package var verified: Verified? {
        if case .dedupe(let work) = work { return work }
        return nil
    }

    /// What the grant stage grants (`nil`: not a grant job).
    package var claimed: Claimed? {
        if case .grant(let work) = work { return work }
        return nil
    }

    /// The notification a notify job applies (`nil`: not one, or an errand).
    package var notification: VerifiedNotification? {
        if case .notification(let notification) = work { return notification }
        return nil
    }

    /// A replayed webhook delivery's one event (`nil`: a user's delivery job, or not a delivery).
    package var replayedWebhookEvent: String? {
        if case .delivery(let event, _) = work { return event }
        return nil
    }

    /// The destination a delivery job delivers to: its name, `default` when the job names none.
    package var webhookDestination: String {
        if case .delivery(_, let destination?) = work { return destination }
        return RedisKeys.defaultWebhookDestination
    }

    /// What a verify job checks: the first of receipt, signed transaction, app transaction,
    /// transaction id, subscription to re-check, Apple Account to sync.
    package enum Evidence: Sendable, Equatable {
        /// The base64 app receipt.
        case receipt(String)
        /// A StoreKit 2 signed transaction (compact JWS).
        case signedTransaction(String)
        /// A StoreKit `AppTransaction` (compact JWS): who the Apple Account is, nothing bought.
        case appTransaction(String)
        /// Only a transaction id: the verifier looks it up with the App Store Server API.
        case transactionLookup(String)
        /// A re-check: the subscription to ask Apple about.
        case recheck(RecheckRequest)
        /// An operator's sync of an Apple Account (`iapctl user sync`): no signed evidence; the
        /// environment whose history is read (`nil`: Production).
        case accountSync(String, environment: String?)
    }
}
