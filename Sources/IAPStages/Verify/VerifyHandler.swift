import AppleJWS
import AppleReceipt
import AppStoreServerAPI
import Logging
import PipelineCore

/// Verify stage: checks the evidence (asks Apple about a receipt, verifies a signed transaction
/// offline, or looks a transaction id up), checks it belongs to our app, and moves the job on to
/// dedupe, a rejection, a retry, or the dead letters.
package struct VerifyHandler: JobHandler {
    package let stage = Stage.verify
    /// Apple's seams for every app; a job's are resolved for its app (`AppleSeams.of(app:)`).
    /// Without App Store Server API keys: no lookup, no sync, and re-checks by the stored receipt.
    package let apple: AppleSeams
    package let signedData: SignedDataVerifier
    package let bundleIDs: Set<String>
    package let retryPolicy: RetryPolicy
    /// What the housekeeping needs to queue due re-checks; `nil`: this worker queues none.
    package let rechecks: RecheckPromotion?
    /// `IAP_RECEIPT_MODE` resolved: legacy receipts read here and verified by the Server API
    /// (`nil`: sent to verifyReceipt).
    package let receiptsByServerAPI: ReceiptByServerAPI?
    /// The fleet's Apple breaker (`IAP_APPLE_BREAKER_FAILURES`); `nil`: every failure spends an attempt.
    package let breaker: AppleBreaker?

    package let transitions: [any PipelineScript.Type] = [ForwardJob.self, FinishTicket.self, ScheduleRetry.self, KeepHistoryRevision.self]
    /// `mark_verifying` for the tickets of a worker's jobs taken at about the same time, in one call.
    private let verifyingMarks = WorkerBatchers<String, Bool> { worker in
        GroupCommit(maxBatch: 64) { tickets in
            let missing = try await worker.store.markVerifying(tickets: tickets)
            return tickets.map { !missing.contains($0) }
        }
    }

    package init(
        apple: AppleSeams, signedData: SignedDataVerifier, bundleIDs: Set<String>, retryPolicy: RetryPolicy,
        rechecks: RecheckPromotion? = nil, receiptsByServerAPI: ReceiptByServerAPI? = nil, breaker: AppleBreaker? = nil
    ) {
        self.apple = apple
        self.signedData = signedData
        self.bundleIDs = bundleIDs
        self.retryPolicy = retryPolicy
        self.rechecks = rechecks
        self.receiptsByServerAPI = receiptsByServerAPI
        self.breaker = breaker
    }

    /// Re-checks go to the verify stage: its workers queue those due (`promote_due_rechecks`).
    /// The answers Apple gave are told to the breaker (once a second per process).
    package func housekeeping(_ worker: WorkerContext) async throws {
        await breaker?.tellAnswers()
        guard let rechecks else { return }
        let queued = try await worker.store.promoteDueRechecks(
            schedule: rechecks.schedule, ticketTTL: rechecks.ticketTTL)
        PipelineMetrics.rechecksQueued(queued)
    }

    package func accepts(_ job: Job) -> Bool { job.stage == .verify && job.toVerify != nil }

    package func handle(_ held: HeldJob) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        guard let evidence = job.toVerify?.evidence else {  // `accepts` took only verify jobs
            await held.deadLetter(reason: ReasonCode.undecodableJob, error: "a verify job without evidence", attempts: 0)
            return
        }
        guard let exists = await worker.transition(MarkVerifying.self, { try await verifyingMarks.submit(job.ticket, by: worker) }) else {
            return
        }
        if !exists {
            await held.settle(.ticketMissing, by: MarkVerifying.self)
            return
        }
        let attempt = job.attempts + 1
        if let service = service(of: job), let breaker, case .wait(let wait) = await breaker.turn(service) {
            // The service fails for everyone: this job does not ask; it waits for a later turn, spending nothing.
            await held.retry(
                attempt: attempt, reason: ReasonCode.appleBreakerOpen,
                detail: "\(service.rawValue) fails for everyone: waiting while one probe an interval asks", retryAfterMs: nil,
                policy: retryPolicy, spends: false, after: breaker.spread(wait))
            return
        }
        let apple = self.apple.of(app: job.bundleID)
        let outcome: VerificationOutcome
        switch evidence {
        case .receipt(let receiptData):
            if let receiptsByServerAPI {
                outcome = await receiptsByServerAPI.verify(receiptData: receiptData, bundleID: job.bundleID)
            } else {
                outcome = await apple.verifier.verify(receiptData: receiptData, attempt: attempt)
            }
        case .signedTransaction(let jws):
            outcome = await signedData.outcome(of: jws)
        case .appTransaction(let jws):
            await acceptAppTransaction(jws, held: held, attempt: attempt)
            return
        case .accountSync(let account, let environment):
            // An operator named the account: nothing signed to verify, Apple's history is the evidence.
            let environment = environment ?? "Production"
            guard await sync(account, environment: environment, history: apple.history, held: held, attempt: attempt)
            else { return }
            await forwardBinding(account, environment: environment, held: held, attempt: attempt)
            return
        case .transactionLookup(let transactionID):
            guard let lookup = apple.lookup else {
                // The intake took it because its settings allow lookups and ours do not: our gap, replayable.
                await worker.deadLetter(
                    payload, ticket: job.ticket, reason: ReasonCode.serverAPINotConfigured,
                    error: "this verifier has no App Store Server API keys; set IAP_APPLE_API_* and replay", attempts: attempt)
                return
            }
            outcome = await lookup.lookUp(transactionID: transactionID, attempt: attempt)
        case .recheck(let request):
            if let subscriptions = apple.subscriptions {
                outcome = await subscriptions.check(
                    originalTransactionID: request.originalTransactionID, environment: request.environment,
                    knownLatest: request.latestTransactionID, knownExpiresAt: request.expiresAt, knownRevision: request.historyRevision,
                    attempt: attempt)
            } else {
                guard let recheck = await recheckByReceipt(request, held: held, attempt: attempt) else { return }
                outcome = recheck
            }
        }
        if Task.isCancelled { return }
        await conclude(outcome, held: held, attempt: attempt)
    }

    /// Ends the job as Apple's (or the offline check's) outcome says; Apple's answers and
    /// failures are told to the breaker (signed transactions are checked without Apple).
    /// `true` when the job went on to dedupe.
    @discardableResult
    private func conclude(_ outcome: VerificationOutcome, held: HeldJob, attempt: Int, read: SyncRead? = nil) async -> Bool {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        if let asked = service(of: job), let breaker {
            if case .transient(let reason, _, _) = outcome {
                if let failing = AppleService(failure: reason),
                    let verdict = await breaker.failed(failing, reason: reason, failedBefore: job.appleFailedAt)
                {
                    await retry(outcome, held: held, attempt: attempt, apple: verdict)
                    return false
                }
            } else {
                await breaker.answered(asked)
            }
        }
        switch outcome {
        case .valid(let receipt):
            return await accept(receipt, held: held, attempt: attempt, read: read)
        case .rejected(let reason, let detail):
            if let detail {
                worker.logger.warning("evidence refused", metadata: ["ticket": "\(job.ticket)", "reason": "\(reason)", "cause": "\(detail)"])
            }
            await reject(held, reason: reason, attempt: attempt, environment: nil, lastError: detail)
        case .misconfigured(let reason, let detail):
            worker.logger.critical("Apple says our configuration is wrong; the job goes to the dead letters", metadata: [
                "reason": "\(reason)", "detail": "\(detail)",
            ])
            await worker.deadLetter(payload, ticket: job.ticket, reason: reason, error: detail, attempts: attempt)
        case .transient:
            await retry(outcome, held: held, attempt: attempt, apple: nil)
        }
        return false
    }

    /// A transient outcome retried; with the breaker's `apple` verdict, its attempt spent only if
    /// Apple answered others since this job last failed, and while the breaker is open the job
    /// comes back after a probe interval or so.
    private func retry(
        _ outcome: VerificationOutcome, held: HeldJob, attempt: Int, apple: AppleFailureVerdict?
    ) async {
        guard case .transient(let reason, let detail, let retryAfterMs) = outcome else { return }
        let open = apple.map { $0.state != .closed } ?? false
        await held.retry(
            attempt: attempt, reason: reason, detail: detail, retryAfterMs: retryAfterMs, policy: retryPolicy,
            spends: apple?.spends ?? true, after: open ? breaker?.spread(breaker?.settings.probe ?? .zero) : nil,
            appleFailedAt: apple?.at)
    }

    /// The Apple service a job asks (`nil`: checked offline, or not Apple's to answer).
    private func service(of job: Job) -> AppleService? {
        switch job.toVerify?.evidence {
        case .receipt?: return receiptsByServerAPI == nil ? .verifyReceipt : .serverAPI
        case .transactionLookup?, .accountSync?: return .serverAPI
        // A sync reads the account's history with the Server API; a plain binding asks nobody.
        case .appTransaction? where job.source == Job.syncSource: return .serverAPI
        case .recheck?: return apple.subscriptions == nil ? .verifyReceipt : .serverAPI
        default: return nil
        }
    }

    /// Without Server API keys: verifyReceipt with the subscription's stored receipt (the latest a
    /// client sent), read as a re-check; `nil` when the job already ended (nothing to ask with).
    private func recheckByReceipt(
        _ request: RecheckRequest, held: HeldJob, attempt: Int
    ) async -> VerificationOutcome? {
        let worker = held.worker
        let stored: String?
        do {
            stored = try await worker.store.subscriptionReceipt(originalTransactionID: request.originalTransactionID)
        } catch {
            return .transient(reason: "redis_unavailable", detail: "\(error)", retryAfterMs: nil)
        }
        guard let stored else {
            // Nobody to ask with: the schedule tries again later and gives up.
            await reject(
                held, reason: ReasonCode.recheckUnavailable, attempt: attempt, environment: request.environment,
                lastError: "no App Store Server API key (IAP_APPLE_API_*) and no receipt of this subscription stored")
            return nil
        }
        let outcome = await apple.verifier.verify(receiptData: stored, attempt: attempt)
        guard case .valid(let receipt) = outcome else { return outcome }
        guard let answer = receipt.recheck(
            of: request.originalTransactionID, knownExpiresAt: request.expiresAt, now: currentTimeMs())
        else {
            return .rejected(reason: ReasonCode.transactionNotFound, detail: "the stored receipt does not list this subscription")
        }
        return .valid(answer)
    }

    /// What a sync read goes on to dedupe with: the Apple Account, and where its history was read to.
    struct SyncRead {
        var account: String
        var revision: String?
    }

    private func accept(_ receipt: VerifiedReceipt, held: HeldJob, attempt: Int, read: SyncRead? = nil) async -> Bool {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        guard bundleIDs.contains(receipt.bundleID) else {
            await reject(
                held, reason: ReasonCode.bundleMismatch, attempt: attempt, environment: receipt.environment,
                lastError: "bundle id \(receipt.bundleID.prefix(128)) is not in IAP_BUNDLE_IDS")
            return false
        }
        if let named = job.bundleID, named != receipt.bundleID {
            await reject(
                held, reason: ReasonCode.bundleMismatch, attempt: attempt, environment: receipt.environment,
                lastError: "the client named \(named.prefix(128)), the evidence is of \(receipt.bundleID.prefix(128))")
            return false
        }
        guard !receipt.transactions.isEmpty else {
            await reject(
                held, reason: ReasonCode.noPurchases, attempt: attempt, environment: receipt.environment, lastError: nil)
            return false
        }
        var receipt = receipt
        if !job.isRecheck, let appleAccounts = apple.of(app: receipt.bundleID).appleAccounts,
           let unnamed = receipt.transactions.first(where: { $0.appTransactionID == nil })
        {
            switch await appleAccounts.appTransactionID(for: unnamed.transactionID, environment: receipt.environment) {
            case .found(let account):
                for index in receipt.transactions.indices where receipt.transactions[index].appTransactionID == nil {
                    receipt.transactions[index].appTransactionID = account
                }
            case .none(let detail):
                worker.logger.notice("the purchase's Apple Account stays unknown", metadata: [
                    "ticket": "\(job.ticket)", "detail": "\(detail)",
                ])
            case .transient(let reason, let detail, let retryAfterMs):
                await held.retry(
                    attempt: attempt, reason: reason, detail: detail, retryAfterMs: retryAfterMs, policy: retryPolicy)
                return false
            }
        }
        let next = Self.verified(job, receipt: receipt, attempt: attempt, read: read)
        let result = await held.move(by: ForwardJob.self) {
            try await worker.forward(
                payload, to: next,
                ticketFields: [("environment", receipt.environment), ("attempts", String(attempt))])
        }
        return result == .moved
    }

    /// The job on to dedupe with Apple's answer and what the client said.
    static func verified(_ job: Job, receipt: VerifiedReceipt, attempt: Int, read: SyncRead?) -> Job {
        let asked = job.toVerify
        var legacyReceipt: String?
        if case .receipt(let data)? = asked?.evidence { legacyReceipt = data }
        var verified = Job.Verified(
            receipt: receipt, appleAccount: read?.account, historyRevision: read?.revision,
            productID: asked?.productID, transactionID: asked?.transactionID, dryRun: asked?.dryRun ?? false)
        // The client's word on the currency counts only for a legacy receipt: Apple signs the rest.
        verified.currency = legacyReceipt == nil ? nil : asked?.currency
        // A legacy receipt of a subscription is kept (on its record, by the grant) for re-checks by receipt.
        if receipt.transactions.contains(where: { $0.expiresDateMs != nil }) { verified.subscriptionReceipt = legacyReceipt }
        var next = job
        next.stage = .dedupe
        next.attempts = attempt
        next.work = .dedupe(verified)
        return next
    }

    /// A signed app transaction: verified offline like any signed data (its signing time is its
    /// `receiptCreationDate`), of our app, naming its Apple Account; dedupe then binds that account
    /// to the user. Nothing is granted.
    private func acceptAppTransaction(_ jws: String, held: HeldJob, attempt: Int) async {
        let job = held.job
        let app: JWSAppTransaction
        do {
            app = try await signedData.verify(jws, as: JWSAppTransaction.self)
        } catch {
            await reject(
                held, reason: ReasonCode.invalidSignature, attempt: attempt, environment: nil, lastError: "\(error)")
            return
        }
        let environment = app.receiptType ?? "Production"
        guard bundleIDs.contains(app.bundleID) else {
            await reject(
                held, reason: ReasonCode.bundleMismatch, attempt: attempt, environment: environment,
                lastError: "bundle id \(app.bundleID.prefix(128)) is not in IAP_BUNDLE_IDS")
            return
        }
        guard let account = app.appTransactionID, (1...128).contains(account.utf8.count) else {
            await reject(
                held, reason: ReasonCode.noAppTransactionID, attempt: attempt, environment: environment,
                lastError: "the app transaction names no appTransactionId (Apple sends it from iOS 18.4 on)")
            return
        }
        if job.source == Job.syncSource {
            guard await sync(account, environment: environment, history: apple.of(app: app.bundleID).history, held: held, attempt: attempt)
            else { return }
        }
        await forwardBinding(account, environment: environment, held: held, attempt: attempt)
    }

    /// The job on to dedupe to seat its Apple Account on the user, nothing to grant (a dry run's:
    /// nothing seated either).
    private func forwardBinding(_ account: String, environment: String, held: HeldJob, attempt: Int) async {
        let (payload, worker) = (held.payload, held.worker)
        var next = held.job
        next.stage = .dedupe
        next.attempts = attempt
        next.work = .dedupe(Job.Verified(receipt: nil, appleAccount: account, dryRun: held.job.toVerify?.dryRun ?? false))
        await held.move(by: ForwardJob.self) {
            try await worker.forward(payload, to: next, ticketFields: [("environment", environment), ("attempts", String(attempt))])
        }
    }

    private func reject(
        _ held: HeldJob, reason: String, attempt: Int, environment: String?, lastError: String?
    ) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        await held.move(by: FinishTicket.self) {
            try await worker.store.finish(
                payload, member: worker.member, ticket: job.ticket, status: .rejected, reason: reason, attempts: attempt,
                environment: environment, lastError: lastError)
        }
    }
}

extension VerifyHandler {
    /// A sync: every purchase Apple has of the Apple Account is read (Get Transaction History by
    /// its `appTransactionId`) and goes on to dedupe with the account, which claims and grants
    /// those the books do not know and leaves the rest alone. `false`: the job ended here (a
    /// retry, a rejection, a dead letter, or it went on with what Apple found); `true`: Apple
    /// has nothing of the account, and the job goes on as a plain binding of it.
    func sync(
        _ account: String, environment: String, history: (any CustomerHistoryReading)?, held: HeldJob, attempt: Int
    ) async -> Bool {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        guard let history else {
            // The intake took it because its settings allow a sync and ours do not: our gap, replayable.
            await worker.deadLetter(
                payload, ticket: job.ticket, reason: ReasonCode.serverAPINotConfigured,
                error: "this verifier has no App Store Server API keys; set IAP_APPLE_API_* and replay", attempts: attempt)
            return false
        }
        if job.toVerify?.dryRun == true {
            // A dry run reads everything Apple has and keeps no revision: the next sync reads as if it had not run.
            let outcome = await history.readAll(account, environment: environment)
            if case .rejected(let reason, _) = outcome, reason == ReasonCode.transactionNotFound { return true }
            await conclude(outcome, held: held, attempt: attempt)
            return false
        }
        // Only what changed since the account's last sync (Apple's revision, kept after it).
        guard let kept = await worker.transition(reading: "the history revision", {
            try await worker.store.historyRevision(ofAppleAccount: account, environment: environment)
        }) else { return false }
        let read = await history.read(account, environment: environment, from: kept)
        switch read.outcome {
        case .valid(let receipt):
            worker.logger.info("sync: Apple's history read", metadata: [
                "ticket": "\(job.ticket)", "transactions": "\(receipt.transactions.count)",
            ])
            // Kept by dedupe once the purchases read are claimed: a job lost or ended before that
            // leaves the revision where it was, and the next sync reads them again.
            await conclude(.valid(receipt), held: held, attempt: attempt, read: SyncRead(account: account, revision: read.revision))
            return false
        case .rejected(let reason, _) where reason == ReasonCode.transactionNotFound:
            if let revision = read.revision, revision != kept { await worker.keepHistoryRevision(revision, of: account, environment: environment) }
            return true
        default:
            await conclude(read.outcome, held: held, attempt: attempt)
            return false
        }
    }
}

extension Job {
    /// A re-check of a subscription's state at Apple.
    fileprivate var isRecheck: Bool {
        if case .recheck? = toVerify?.evidence { return true }
        return false
    }
}
