import AppleReceipt
import AppStoreServerAPI
import PipelineCore

extension NotifyHandler {
    /// Sets the user's app account token at Apple on a purchase granted without one, so that
    /// Apple's later transactions and notifications of it name the user. The errand's ticket ends
    /// `applied` with its result: `app_account_token_set`, `transaction_not_found`,
    /// `family_shared` (Apple sets none on a family member's), `apple_api_error_<code>`, or
    /// `app_account_token_not_sent` on a notifier without Server API keys.
    func setAccountToken(_ request: AppAccountTokenRequest, held: HeldJob) async {
        let (job, worker) = (held.job, held.worker)
        guard let (client, policy) = await errandClient(
            for: request.bundleID, held: held, notSent: "app_account_token_not_sent",
            about: ("original_transaction_id", request.originalTransactionID))
        else { return }
        let environment: ServerAPIEnvironment = request.environment == "Sandbox" ? .sandbox : .production
        let answer = await client.setAppAccountToken(
            request.appAccountToken, originalTransactionID: request.originalTransactionID, environment: environment)
        if case .ok = answer {
            worker.logger.info("app account token set at Apple", metadata: [
                "original_transaction_id": "\(request.originalTransactionID)", "user_id": "\(job.userID)",
            ])
        }
        await settleErrand(
            answer, done: "app_account_token_set", refusal: "Apple refused the app account token", held: held, policy: policy,
            known: [AccountTokenErrands.familyTransactionNotSupported: "family_shared"])
    }

    /// Finishes a granted consumable at Apple (Finish Transaction). The errand's ticket ends
    /// `applied` with its result: `transaction_finished`, `transaction_not_found` (an answer, not
    /// an error), `apple_api_error_<code>`, or `finish_transaction_not_sent` on a notifier without
    /// Server API keys.
    func finishTransaction(_ request: FinishTransactionRequest, held: HeldJob) async {
        guard let (client, policy) = await errandClient(
            for: request.bundleID, held: held, notSent: "finish_transaction_not_sent", about: ("transaction_id", request.transactionID))
        else { return }
        let environment: ServerAPIEnvironment = request.environment == "Sandbox" ? .sandbox : .production
        let answer = await client.finishTransaction(request.transactionID, environment: environment)
        await settleErrand(answer, done: "transaction_finished", refusal: "Apple refused to finish the transaction", held: held, policy: policy)
    }

    /// How Apple's answer to an errand ends its ticket: `done`; `transaction_not_found` (an answer,
    /// not an error); a refusal as `known` names its code, else `apple_api_error_<code>` (logged as
    /// `refusal`); a call that did not answer is retried or dead-lettered.
    private func settleErrand(
        _ answer: ServerAPIAnswer, done: String, refusal: String, held: HeldJob, policy: RetryPolicy, known: [Int: String] = [:]
    ) async {
        switch answer {
        case .ok:
            await finishErrand(done, held: held)
        case .notFound:
            await finishErrand("transaction_not_found", held: held)
        case .refused(let errorCode, let detail):
            if let result = known[errorCode] {
                await finishErrand(result, held: held)
                return
            }
            held.worker.logger.warning("\(refusal)", metadata: ["error_code": "\(errorCode)", "detail": "\(detail)"])
            await finishErrand(ReasonCode.appleAPIError(errorCode), held: held)
        case .unauthorized, .misconfigured, .transient:
            await deadLetterOrRetry(answer, held: held, attempt: held.job.attempts + 1, policy: policy)
        }
    }

    /// An errand's ticket ends `applied` with `result` (`record_notification`, nothing else written).
    private func finishErrand(_ result: String, held: HeldJob) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        await held.move(by: RecordNotification.self) {
            try await worker.store.recordNotification(payload, member: worker.member, job: job, result: result, entry: "", in: .nothing)
        }
    }

    /// The client of the errand's app (resolved once) and the errands' retry policy; `nil` on a
    /// notifier without Server API keys, the errand's ticket then ended with `notSent`.
    private func errandClient(
        for bundleID: String?, held: HeldJob, notSent: String, about id: (name: String, value: String)
    ) async -> (ServerAPIClient, RetryPolicy)? {
        guard let accountTokens else {
            held.worker.logger.warning("an errand to Apple, but this notifier has no Server API keys", metadata: [
                "errand": "\(notSent)", id.name: "\(id.value)",
            ])
            await finishErrand(notSent, held: held)
            return nil
        }
        return (accountTokens.apps.of(bundleID), accountTokens.retryPolicy)
    }

    /// An Apple call that did not answer: our key refused or our setup wrong is a dead letter
    /// (replay once fixed), Apple's 5xx, 429 or the fleet's spent budget a retry.
    func deadLetterOrRetry(
        _ answer: ServerAPIAnswer, held: HeldJob, attempt: Int, policy: RetryPolicy
    ) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        switch answer {
        case .unauthorized(let status, let detail):
            await worker.deadLetter(
                payload, ticket: job.ticket, reason: ReasonCode.appleAPIUnauthorized,
                error: "the App Store Server API refused our token (\(status)): check the IAP_APPLE_API_* settings; \(detail)",
                attempts: attempt)
        case .misconfigured(let detail):
            await worker.deadLetter(payload, ticket: job.ticket, reason: ReasonCode.appleAPIMisconfigured, error: detail, attempts: attempt)
        case .transient(let reason, let detail, let retryAfterMs):
            await held.retry(
                attempt: attempt, reason: reason, detail: detail, retryAfterMs: retryAfterMs, policy: policy)
        case .ok, .notFound, .refused:
            preconditionFailure("deadLetterOrRetry is for calls that did not answer")
        }
    }
}
