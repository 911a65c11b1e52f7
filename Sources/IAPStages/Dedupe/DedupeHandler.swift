import AppleReceipt
import PipelineCore

/// Dedupe stage: decides which purchases this job may grant, what each one's grant unit is and
/// what the purchase policy says of it, then claims the units (`SET … NX`, held ones too, so
/// nobody else is granted them meanwhile) and forwards the job to grant, in one script.
package struct DedupeHandler: JobHandler {
    package let stage = Stage.dedupe
    package let transitions: [any PipelineScript.Type] = [
        ClaimPurchases.self, ClaimPart.self, SplitJob.self, SeatAppleAccount.self, FinishTicket.self,
    ]
    package let catalog: ProductCatalog
    package let policy: PurchasePolicy
    /// Each app's cutover and what a purchase made before it gets.
    package let adoption: Adoption
    /// How long a part's own ticket lives (`IAP_TICKET_TTL_S`, as its client's).
    package let ticketTTL: Duration
    /// `claim_purchases` for a worker's jobs finishing at about the same time, in one call.
    private let claims = WorkerBatchers<ClaimItem, TransitionResult> { worker in
        GroupCommit(maxBatch: 64) { jobs in
            try await worker.store.claimAndForward(jobs.map { ($0.payload, $0.next) }, member: worker.member)
        }
    }

    private struct ClaimItem: Sendable {
        var payload: String
        var next: Job
    }

    package init(
        catalog: ProductCatalog, policy: PurchasePolicy = .open, adoption: Adoption = .none, ticketTTL: Duration = .seconds(86400)
    ) {
        self.catalog = catalog
        self.policy = policy
        self.adoption = adoption
        self.ticketTTL = ticketTTL
    }

    package func accepts(_ job: Job) -> Bool { job.stage == .dedupe && job.verified != nil }

    package func handle(_ held: HeldJob) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        guard let verified = job.verified else {  // `accepts` took only dedupe jobs
            await held.deadLetter(reason: ReasonCode.undecodableJob, error: "not a dedupe job", attempts: 0)
            return
        }
        if verified.dryRun {
            await answerDryRun(verified, held: held)
            return
        }
        if let account = verified.appleAccount, verified.receipt == nil {
            await bind(account, held: held)
            return
        }
        guard let receipt = verified.receipt else {
            await worker.deadLetter(
                payload, ticket: job.ticket, reason: ReasonCode.missingVerifiedReceipt, error: "a dedupe job without its receipt",
                attempts: job.attempts)
            return
        }
        if let account = verified.appleAccount {
            // A sync: the user takes their seat on the Apple Account whatever its purchases' fates.
            guard await worker.transition(SeatAppleAccount.self, {
                try await worker.store.seatAppleAccount(account, user: job.userID, limit: policy.maxAccountsPerAppleAccount)
            }) != nil else { return }
        }
        guard let next = await claimed(held, receipt: receipt, subscriptionReceipt: verified.subscriptionReceipt) else { return }
        // A paid product our catalog does not know is our configuration's fault, not the user's:
        // rejecting it would lose the order, so it waits as a dead letter for the catalog fix and a replay.
        let unknown = Set(next.grantWork.purchases.filter { $0.reason == ReasonCode.unknownProduct }.map(\.productID))
        if !unknown.isEmpty {
            await worker.deadLetter(
                payload, ticket: job.ticket, reason: ReasonCode.unknownProduct,
                error: "not in the product catalog: \(unknown.sorted().joined(separator: ", ")); add to IAP_PRODUCTS_FILE, then replay",
                attempts: job.attempts)
            return
        }
        let moved: TransitionResult?
        if let parts = Self.parts(of: next, layout: worker.store.keys.layout) {
            moved = await split(held, into: parts)
        } else {
            moved = await held.move(by: ClaimPurchases.self) {
                try await claims.submit(ClaimItem(payload: payload, next: next), by: worker)
            }
        }
        if moved == .moved { await keepHistoryRevision(of: verified, worker: worker) }
    }

    /// The grant job: each purchase's fate decided, with the policy's limits grant applies
    /// (`nil`: the job ended, reading whose the purchases' tokens are).
    private func claimed(_ held: HeldJob, receipt: VerifiedReceipt, subscriptionReceipt: String?) async -> Job? {
        let (job, worker) = (held.job, held.worker)
        // Whose each purchase's Apple-signed token says it is: read before the claim, which a
        // purchase of another user's token never makes.
        let tokens = Set(receipt.transactions.compactMap { $0.appAccountToken?.lowercased() })
        var tokenOwners: [String: String] = [:]
        if !tokens.isEmpty {
            guard let owners = await worker.transition(reading: "account-token owners", {
                try await worker.store.owners(ofAccountTokens: tokens)
            }) else { return nil }
            tokenOwners = owners
        }
        var next = job
        next.stage = .grant
        // A sync leaves every purchase the books know where it is: no transfer, no share.
        next.work = .grant(Job.Claimed(
            purchases: purchases(for: job, in: receipt, tokenOwners: tokenOwners), receipt: receipt,
            refundLimit: policy.maxRefundsPerUser, appleAccountLimit: policy.maxAccountsPerAppleAccount,
            sharing: job.source == Job.syncSource ? nil : policy.sharing, subscriptionReceipt: subscriptionReceipt))
        return next
    }

    /// A sync's purchases are claimed (or split into parts that claim them): the Apple Account's
    /// history revision the verify stage read up to is kept now, so the next sync reads only what
    /// is newer. Kept only after the claims: a sync lost or ended before them leaves it, and the
    /// next reads its purchases again. A failure costs the next sync a longer read, nothing more.
    private func keepHistoryRevision(of verified: Job.Verified, worker: WorkerContext) async {
        guard let revision = verified.historyRevision, let account = verified.appleAccount, let environment = verified.receipt?.environment
        else {
            return
        }
        await worker.keepHistoryRevision(revision, of: account, environment: environment)
    }


    /// A verified app transaction: the user takes their place among the users of that Apple
    /// Account (`seat_apple_account`, kept for good), and the ticket ends `applied`, nothing
    /// granted, its `result` `apple_account_bound`, or `apple_account_shared` when the user comes
    /// after `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT` others (their purchases on it will be held).
    private func bind(_ account: String, held: HeldJob) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        guard let seated = await worker.transition(SeatAppleAccount.self, {
            try await worker.store.seatAppleAccount(account, user: job.userID, limit: policy.maxAccountsPerAppleAccount)
        }) else { return }
        await held.move(by: FinishTicket.self) {
            try await worker.store.finish(
                payload, member: worker.member, ticket: job.ticket, status: .applied, reason: "", attempts: job.attempts,
                environment: nil, result: seated ? Self.boundResult : ReasonCode.appleAccountShared)
        }
    }

    /// A sync's dry run: what a sync would do with each purchase Apple has of the account, read
    /// and never written (nothing claimed, no seat taken), on the ticket: `applied`, result
    /// `dry_run`, each purchase's would-be outcome in `transactions`.
    private func answerDryRun(_ verified: Job.Verified, held: HeldJob) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        var transactions = "[]"
        if let receipt = verified.receipt {
            guard let preview = await worker.transition(reading: "the books for a dry run", {
                try await SyncPreview.of(receipt, user: job.userID, dedupe: self, store: worker.store)
            }) else { return }
            transactions = preview.ticketTransactions
        }
        await held.move(by: FinishTicket.self) {
            try await worker.store.finish(
                payload, member: worker.member, ticket: job.ticket, status: .applied, reason: "", attempts: job.attempts,
                environment: verified.receipt?.environment, result: Self.dryRunResult, transactions: transactions)
        }
    }

    /// The result of a sync's dry run.
    package static let dryRunResult = "dry_run"

    /// The result of a ticket that bound an Apple Account to its user within the limit.
    package static let boundResult = "apple_account_bound"
    /// A grant job whose claimed purchases lie in buckets besides its ticket's, as one job per
    /// bucket (`nil` when they all lie in the ticket's: one bucket is one atomic step, as before
    /// buckets). Each part carries its bucket's purchases, in the receipt's order, and its own id
    /// (`<bucket>.<ticket>`); lines that claim nothing (rejections) go with the first part; a
    /// re-check's answer goes with the part of its subscription.
    package static func parts(of job: Job, layout: BucketLayout) -> [Job]? {
        guard layout.count > 1, let claimed = job.claimed else { return nil }
        let purchases = claimed.purchases
        let home = layout.bucket(ofTicket: job.ticket)
        func bucket(_ purchase: Purchase) -> Int? {
            guard purchase.isClaimed, purchase.unit != nil else { return nil }
            return layout.bucket(ofOriginalTransactionID: purchase.originalTransactionID)
        }
        let buckets = purchases.compactMap(bucket)
        guard buckets.contains(where: { $0 != home }) else { return nil }
        var order: [Int] = []
        for b in buckets where !order.contains(b) { order.append(b) }
        return order.enumerated().map { index, b in
            var part = job
            part.part = layout.ticketID(job.ticket, inBucket: b)
            var work = claimed
            work.purchases = purchases.filter { bucket($0) == b || (index == 0 && bucket($0) == nil) }
            if let renewal = claimed.renewal, layout.bucket(ofOriginalTransactionID: renewal.originalTransactionID) != b {
                work.renewal = nil
                work.renewalPeriod = nil
            }
            part.work = .grant(work)
            return part
        }
    }

    /// Queues each part on its bucket (its units claimed there), then acks the job, naming its
    /// parts on the ticket. A redelivered job queues no part twice (`claim_part` finds it).
    private func split(_ held: HeldJob, into parts: [Job]) async -> TransitionResult? {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        for part in parts {
            guard await worker.transition(ClaimPart.self, { try await worker.store.claimPart(part, ttl: ticketTTL) }) != nil
            else { return nil }
        }
        return await held.move(by: SplitJob.self) {
            try await worker.store.split(payload, member: worker.member, ticket: job.ticket, parts: parts.compactMap(\.part))
        }
    }

    /// A claimable purchase's fate: pre-adoption first (the old system granted it, whatever
    /// today's policy says: recorded without its counted rules, or held), then the policy's own hold.
    private func decide(_ purchase: inout Purchase, _ transaction: InAppTransaction, app: String) {
        purchase.outcome = .pending
        switch catalog.products[transaction.productID].flatMap({ adoption.preAdoption(transaction, type: $0, app: app) }) {
        case .record:
            purchase.adopt = true
            purchase.dailyLimit = nil
            return
        case .hold:
            purchase.outcome = .held
            purchase.reason = ReasonCode.preAdoption
            return
        case .grant, nil:
            break
        }
        if let hold = policy.holdReason(currency: purchase.currency) {
            purchase.outcome = .held
            purchase.reason = hold
        }
    }

    /// Whether another account may prove this product for itself: a non-consumable or a
    /// subscription under `IAP_SHARING_POLICY` `transfer` or `share`, where a restore on a shared
    /// Apple ID names the buyer's token by design and the policy decides.
    private func sharable(_ productID: String) -> Bool {
        guard policy.sharing != .bind, let type = catalog.products[productID] else { return false }
        return type == .nonConsumable || type == .autoRenewable
    }

    /// The purchases a job may grant: those the client named, else all in the receipt; each
    /// pending (with its grant unit and the counted rules' limits), held by a rule the policy
    /// decides alone (with its unit, to be claimed), or rejected with a reason. `tokenOwners`:
    /// the user each bound app account token belongs to; a purchase whose token is another
    /// user's is rejected `app_account_token_mismatch` (unclaimed: its owner can still have it).
    package func purchases(for job: Job, in receipt: VerifiedReceipt, tokenOwners: [String: String] = [:]) -> [Purchase] {
        let asked = job.verified  // what the client said it bought
        var chosen = receipt.transactions
        var missing: String?
        if let wanted = asked?.transactionID {
            chosen = chosen.filter { $0.transactionID == wanted }
            if chosen.isEmpty { missing = ReasonCode.transactionNotInReceipt }
        }
        if missing == nil, let product = asked?.productID {
            chosen = chosen.filter { $0.productID == product }
            if chosen.isEmpty { missing = ReasonCode.productMismatch }
        }
        if let missing {
            // Nothing to grant: one rejected line says what the client asked for.
            return [Purchase(
                transactionID: asked?.transactionID ?? "", originalTransactionID: "", productID: asked?.productID ?? "",
                quantity: 0, unit: nil, outcome: .rejected, reason: missing)]
        }
        return chosen.map { transaction in
            var purchase = Purchase(
                transactionID: transaction.transactionID, originalTransactionID: transaction.originalTransactionID,
                productID: transaction.productID, quantity: transaction.quantity, unit: nil, outcome: .rejected)
            if transaction.isRefunded {
                purchase.reason = ReasonCode.refunded
            } else if let owner = transaction.appAccountToken.flatMap({ tokenOwners[$0.lowercased()] }), owner != job.userID,
                !sharable(transaction.productID)
            {
                purchase.reason = ReasonCode.appAccountTokenMismatch
            } else if !policy.allows(environment: receipt.environment, user: job.userID) {
                purchase.reason = ReasonCode.sandboxNotAllowed
            } else if let unit = catalog.grantUnit(for: transaction) {
                purchase.unit = unit
                purchase.currency = transaction.currency ?? asked?.currency
                purchase.dailyLimit = catalog.dailyLimits[transaction.productID]
                if let type = catalog.products[transaction.productID], type == .nonConsumable || type == .autoRenewable {
                    purchase.kind = type.rawValue
                    purchase.entitlements = catalog.entitlements[transaction.productID]
                }
                if catalog.products[transaction.productID] == .consumable { purchase.consumable = true }
                if catalog.products[transaction.productID] == .autoRenewable {
                    purchase.expiresAt = transaction.expiresDateMs.flatMap { Int64($0) }
                    purchase.signedAt = transaction.signedDateMs.flatMap { Int64($0) }
                }
                decide(&purchase, transaction, app: receipt.bundleID)
            } else {
                purchase.reason = ReasonCode.unknownProduct
            }
            return purchase
        }
    }
}
