import AppleJWS
import AppleReceipt
import AppStoreServerAPI
import Foundation
import PipelineCore

/// Notify stage: applies one App Store Server Notification, verified at the intake's door.
/// REFUND and REVOKE take the grant back (or keep a grant from happening), REFUND_REVERSED gives it
/// back, a purchase Apple reports (ONE_TIME_CHARGE, SUBSCRIBED, DID_RENEW, OFFER_REDEEMED) enters
/// the dedupe → grant path for its account or waits unclaimed, CONSUMPTION_REQUEST is answered
/// when the settings say so and the user consented, and everything else is kept per original
/// transaction. Unknown types never fail.
package struct NotifyHandler: JobHandler {
    package let stage = Stage.notify
    package let transitions: [any PipelineScript.Type] = [
        RevokeGrant.self, ReinstateGrant.self, ApplySubscriptionNotification.self, RecordNotification.self, ForwardJob.self,
        ScheduleRetry.self,
    ]
    package let catalog: ProductCatalog
    /// `nil`: consumption requests are only recorded (no Server API keys, or `IAP_REFUND_PREFERENCE=none`).
    package let consumption: ConsumptionAnswering?

    /// What the stage does with a notification of each of Apple's types. The switch has no
    /// default: a type added to `NotificationType` does not build until it is decided here (and in
    /// `NotificationEvent`). A type Apple adds before this build knows it is recorded.
    enum Route: Equatable {
        /// Takes the grant back (or keeps one from happening), or gives it back (`REFUND_REVERSED`).
        case revokeOrReinstate
        /// A purchase Apple reports: the dedupe → grant path for its account, or it waits unclaimed.
        case grant
        /// Moves a subscription without a grant.
        case subscriptionChange
        case consumptionRequest
        /// Kept on its original transaction's history.
        case record
    }

    static func route(_ type: NotificationType?) -> Route {
        switch type {
        case .refund, .revoke, .refundReversed: .revokeOrReinstate
        case .oneTimeCharge, .subscribed, .didRenew, .offerRedeemed: .grant
        case .expired, .didFailToRenew, .gracePeriodExpired, .didChangeRenewalStatus, .renewalExtended: .subscriptionChange
        case .consumptionRequest: .consumptionRequest
        case .didChangeRenewalPref, .externalPurchaseToken, .metadataUpdate, .migration, .priceChange, .priceIncrease,
             .refundDeclined, .renewalExtension, .rescindConsent, .test, nil:
            .record
        }
    }

    /// `nil`: an app account token errand is recorded as not sent (no Server API keys here).
    package let accountTokens: AccountTokenErrands?

    package init(catalog: ProductCatalog, consumption: ConsumptionAnswering? = nil, accountTokens: AccountTokenErrands? = nil) {
        self.catalog = catalog
        self.consumption = consumption
        self.accountTokens = accountTokens
    }

    package func handle(_ held: HeldJob) async {
        let job = held.job
        let notification: VerifiedNotification
        switch job.work {
        case .setAppAccountToken(let request):
            await setAccountToken(request, held: held)
            return
        case .finishTransaction(let request):
            await finishTransaction(request, held: held)
            return
        case .notification(let verified):
            notification = verified
        default:  // `accepts` took only notify jobs
            await held.deadLetter(reason: ReasonCode.undecodableJob, error: "a notify job without its notification", attempts: 0)
            return
        }
        switch (Self.route(notification.notificationType), notification.transaction) {
        case (.revokeOrReinstate, let transaction?):
            await revokeOrReinstate(transaction, notification: notification, held: held)
        case (.grant, let transaction?):
            await grantToAccount(transaction, notification: notification, held: held)
        case (.subscriptionChange, let transaction?):
            guard let change = subscriptionChange(transaction, notification: notification, status: Self.status(after: notification)) else {
                await record(notification, held: held)
                return
            }
            await applySubscriptionChange(change, notification: notification, held: held)
        case (.consumptionRequest, let transaction?):
            guard let consumption else {
                await record(notification, held: held)
                return
            }
            await answerConsumptionRequest(
                transaction, answering: consumption, notification: notification, held: held)
        case (.revokeOrReinstate, nil), (.grant, nil), (.subscriptionChange, nil), (.consumptionRequest, nil), (.record, _):
            await record(notification, held: held)
        }
    }

    private func unit(of transaction: JWSTransaction, held: HeldJob) async -> String? {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        if let unit = catalog.grantUnit(for: InAppTransaction(signed: transaction)) { return unit }
        // As in dedupe: a product our catalog does not know waits for the catalog fix and a replay.
        await worker.deadLetter(
            payload, ticket: job.ticket, reason: ReasonCode.unknownProduct,
            error: "not in the product catalog: \(transaction.productID); add to IAP_PRODUCTS_FILE, then replay", attempts: 0)
        return nil
    }

    private func revokeOrReinstate(
        _ transaction: JWSTransaction, notification: VerifiedNotification, held: HeldJob
    ) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        guard let unit = await unit(of: transaction, held: held) else { return }
        let reversal = notification.notificationType == .refundReversed
        let step: any PipelineScript.Type = reversal ? ReinstateGrant.self : RevokeGrant.self
        // A subscription's period: its record follows (only when it is the latest period).
        let now = currentTimeMs()
        let afterReversal = (transaction.expiresDate ?? Int64.max) > now ? "active" : "expired"
        var change = subscriptionChange(transaction, notification: notification, status: reversal ? afterReversal : "revoked")
        change?.requireLatest = true
        let outcome = await worker.transition(step) { [change] in
            reversal
                ? try await worker.store.reinstate(
                    payload, member: worker.member, job: job, unit: unit, originalTransactionID: transaction.originalTransactionID,
                    subscription: change)
                : try await worker.store.revoke(
                    payload, member: worker.member, job: job, unit: unit, originalTransactionID: transaction.originalTransactionID,
                    revocation: Revocation(
                        transaction, notificationType: notification.type,
                        consumable: catalog.products[transaction.productID] == .consumable),
                    subscription: change)
        }
        guard let (result, applied) = outcome else { return }
        if result == .moved, !reversal, applied == "revoked" || applied == "partially_revoked" {
            SalesMetrics.countRefund(product: transaction.productID)
        }
        if result == .moved {
            worker.logger.info("notification applied", metadata: [
                "type": "\(notification.type)", "unit": "\(unit)", "result": "\(applied ?? "?")",
            ])
        }
        await held.settle(result, by: step)
    }

    private func grantToAccount(
        _ transaction: JWSTransaction, notification: VerifiedNotification, held: HeldJob
    ) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        let found = await worker.transition(reading: "find_account") {
            try await worker.store.account(
                appAccountToken: transaction.appAccountToken, originalTransactionID: transaction.originalTransactionID,
                appTransactionID: transaction.appTransactionID)
        }
        guard let user = found else { return }
        guard let user else {
            // Nobody we know bought it: it waits until a user proves it (any evidence), then is granted once.
            let entry = String(decoding: canonicalJSON(transaction), as: UTF8.self)
            await held.move(by: RecordNotification.self) {
                try await worker.store.recordNotification(
                    payload, member: worker.member, job: job, result: "unclaimed", entry: entry,
                    in: .unclaimed(
                        transactionID: transaction.transactionID, originalTransactionID: transaction.originalTransactionID))
            }
            return
        }
        var next = job
        next.stage = .dedupe
        next.userID = user
        next.source = "notification"
        let receipt = VerifiedReceipt(signed: transaction)
        next.work = .dedupe(Job.Verified(receipt: receipt))
        await held.move(by: ForwardJob.self) {
            try await worker.forward(
                payload, to: next, ticketFields: [("user_id", user), ("environment", receipt.environment), ("attempts", "1")])
        }
    }

    /// Tells Apple what it asks before deciding a refund: whether the purchase was delivered and
    /// how much of it was used (the game's word when it recorded one, else the books'), and the
    /// operator's refund preference for the request's reason. Only for a user who consented:
    /// without consent nothing is sent (Apple would refuse it anyway) and the notification is
    /// recorded as not answered.
    private func answerConsumptionRequest(
        _ transaction: JWSTransaction, answering: ConsumptionAnswering, notification: VerifiedNotification, held: HeldJob
    ) async {
        let (job, worker) = (held.job, held.worker)
        guard let unit = await unit(of: transaction, held: held) else { return }
        let read = await worker.transition(reading: "read_consumption_facts") {
            try await worker.store.consumptionFacts(
                unit: unit, originalTransactionID: transaction.originalTransactionID, transactionID: transaction.transactionID)
        }
        guard let facts = read else { return }
        guard facts.consented else {
            await record(notification, result: "consumption_not_consented", held: held)
            return
        }
        guard let (preference, rule) = await refundPreference(transaction, facts: facts, answering: answering, notification: notification, held: held)
        else { return }
        let information = Self.consumptionInformation(
            facts, autoRenewable: catalog.products[transaction.productID] == .autoRenewable, preference: preference)
        let environment: ServerAPIEnvironment = transaction.environment == "Sandbox" ? .sandbox : .production
        let attempt = job.attempts + 1
        let answer = await answering.apps.of(transaction.bundleID).sendConsumptionInformation(
            information, transactionID: transaction.transactionID, environment: environment)
        switch answer {
        case .ok:
            worker.logger.info("consumption information sent", metadata: [
                "transaction_id": "\(transaction.transactionID)", "delivery_status": "\(information.deliveryStatus.rawValue)",
                "consumption_percentage": "\(information.consumptionPercentage.map(String.init) ?? "-")",
                "refund_preference": "\(information.refundPreference?.rawValue ?? "-")",
                "reason": "\(notification.consumptionRequestReason ?? "-")", "refund_rule": "\(rule)",
            ])
            await record(
                notification, result: "consumption_sent", rule: rule,
                answer: NotificationEvent.refundAnswered(notification, information: information, rule: rule, now: currentTimeMs()),
                held: held)
        case .notFound:
            await record(notification, result: "consumption_transaction_not_found", held: held)
        case .refused(let errorCode, let detail):
            worker.logger.warning("Apple refused the consumption information", metadata: ["error_code": "\(errorCode)", "detail": "\(detail)"])
            await record(notification, result: ReasonCode.appleAPIError(errorCode), held: held)
        case .unauthorized, .misconfigured, .transient:
            await deadLetterOrRetry(answer, held: held, attempt: attempt, policy: answering.retryPolicy)
        }
    }

    /// The preference to send and the rule that chose it: the catalog's first `refund_preference`
    /// rule that matches the request's facts, else `IAP_REFUND_PREFERENCE` (named so). The user's
    /// refunds and spend are read only when a rule asks about them. `nil`: the read failed (the job retries).
    private func refundPreference(
        _ transaction: JWSTransaction, facts: PipelineStore.ConsumptionFacts, answering: ConsumptionAnswering,
        notification: VerifiedNotification, held: HeldJob
    ) async -> (ConsumptionInformation.RefundPreference?, String)? {
        let rules = catalog.refundRules
        guard !rules.isEmpty else {
            return (answering.preferences.preference(for: notification.consumptionRequestReason), RefundRule.lastResort)
        }
        var refunds = 0.0
        if rules.contains(where: { $0.conditions.refundsBefore != nil }), let user = facts.user {
            guard let count = await held.worker.transition(reading: "read_refund_count", {
                try await held.worker.store.refundCount(of: user)
            }) else { return nil }
            refunds = count
        }
        var spend: [String: Int64] = [:]
        if rules.contains(where: { $0.conditions.lifetimeSpend != nil }), let user = facts.user {
            guard let net = await held.worker.transition(reading: "read_net_spend", { try await held.worker.store.netSpend(of: user) }) else {
                return nil
            }
            spend = net
        }
        let delivered = (facts.recorded?.deliveryStatus ?? (facts.delivered ? .delivered : .undeliveredOther)) == .delivered
        let now = Double(currentTimeMs())
        let known = RefundFacts(
            reason: notification.consumptionRequestReason, storefront: transaction.storefront,
            daysSincePurchase: transaction.purchaseDate.map { (now - Double($0)) / 86_400_000 },
            consumedPercent: facts.recorded?.percentage.map { Double($0) / 1000 }, refundsBefore: refunds, netSpend: spend,
            delivered: delivered, sandbox: transaction.environment == "Sandbox")
        if let rule = RefundRule.first(of: rules, matching: known) { return (rule.preference, rule.name) }
        return (answering.preferences.preference(for: notification.consumptionRequestReason), RefundRule.lastResort)
    }

    /// What is sent: the game's recorded delivery status, else the books' (granted and not taken
    /// back: `DELIVERED`); its consumption percentage, never for an auto-renewable subscription and
    /// 0 unless delivered, as Apple requires; the preference, but `GRANT_PRORATED` of a product
    /// with no consumption above 0 is left out (Apple would refuse the whole answer for it).
    package static func consumptionInformation(
        _ facts: PipelineStore.ConsumptionFacts, autoRenewable: Bool, preference: ConsumptionInformation.RefundPreference?
    ) -> ConsumptionInformation {
        let status = facts.recorded?.deliveryStatus ?? (facts.delivered ? .delivered : .undeliveredOther)
        let percentage = autoRenewable ? nil : facts.recorded?.percentage.map { status == .delivered ? $0 : 0 }
        var preference = preference
        if preference == .grantProrated, !autoRenewable, (percentage ?? 0) == 0 { preference = nil }
        return ConsumptionInformation(deliveryStatus: status, refundPreference: preference, consumptionPercentage: percentage)
    }

    /// The subscription's new state a notification says, or `nil` when its product is not an
    /// auto-renewable one of the catalog. Signed time: the notification's `signedDate`.
    private func subscriptionChange(
        _ transaction: JWSTransaction, notification: VerifiedNotification, status: String?
    ) -> SubscriptionChange? {
        guard catalog.products[transaction.productID] == .autoRenewable else { return nil }
        let autoRenew = notification.renewal?.autoRenewStatus
        var change = SubscriptionChange(
            originalTransactionID: transaction.originalTransactionID, productID: transaction.productID, status: status,
            expiresAt: transaction.expiresDate,
            graceExpiresAt: status == "grace_period" ? notification.renewal?.gracePeriodExpiresDate : nil,
            signedAt: notification.signedDate ?? transaction.signedDate ?? currentTimeMs(), cause: "notification:\(notification.type)",
            transactionID: transaction.transactionID, entitlements: catalog.entitlements[transaction.productID] ?? [],
            environment: transaction.environment, autoRenew: autoRenew)
        change.appTransactionID = notification.renewal?.appTransactionID ?? transaction.appTransactionID
        change.eligibleWinBackOfferIDs = notification.renewal?.eligibleWinBackOfferIDs
        change.renewalPlan = notification.renewal?.renewalPlanFields
        change.bundleID = notification.bundleID ?? transaction.bundleID
        if status == "expired" {
            change.expirationReason = ExpirationReason.of(
                subtype: notification.notificationSubtype, intent: notification.renewal?.expirationIntent)
        }
        return change
    }

    /// What a subscription is after `EXPIRED`, `DID_FAIL_TO_RENEW` (grace period or billing retry),
    /// `GRACE_PERIOD_EXPIRED` (Apple still retries); `nil` (unchanged) after `DID_CHANGE_RENEWAL_STATUS`.
    static func status(after notification: VerifiedNotification) -> String? {
        switch notification.notificationType {
        case .expired: return "expired"
        case .didFailToRenew: return notification.notificationSubtype == .gracePeriod ? "grace_period" : "billing_retry"
        case .gracePeriodExpired: return "billing_retry"
        default: return nil
        }
    }

    private func applySubscriptionChange(
        _ change: SubscriptionChange, notification: VerifiedNotification, held: HeldJob
    ) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        let entry = String(decoding: canonicalJSON(NotificationEntry(notification)), as: UTF8.self)
        let event = NotificationEvent.fields(of: notification, now: currentTimeMs())
        let outcome = await worker.transition(ApplySubscriptionNotification.self) {
            try await worker.store.applySubscriptionNotification(
                payload, member: worker.member, job: job, change: change, entry: entry, event: event)
        }
        guard let (result, applied) = outcome else { return }
        if result == .moved, applied == "applied", change.status == "expired" { SalesMetrics.countExpiry(reason: change.expirationReason) }
        if result == .moved {
            worker.logger.info("subscription notification applied", metadata: [
                "type": "\(notification.type)", "original_transaction_id": "\(change.originalTransactionID)", "result": "\(applied ?? "?")",
            ])
        }
        await held.settle(result, by: ApplySubscriptionNotification.self)
    }

    /// Keeps the notification on its original transaction's history (or nowhere when it has none)
    /// and finishes its ticket with `result` (by default `recorded`, or `ignored` without a transaction).
    private func record(
        _ notification: VerifiedNotification, result: String? = nil, rule: String? = nil, answer: [String: String]? = nil,
        held: HeldJob
    ) async {
        let (payload, job, worker) = (held.payload, held.job, held.worker)
        let entry = String(decoding: canonicalJSON(NotificationEntry(notification)), as: UTF8.self)
        let original = notification.originalTransactionID
        let event = answer ?? NotificationEvent.fields(of: notification, now: currentTimeMs())
        // An Apple Account's news (RESCIND_CONSENT) goes to each user who bought on or bound it.
        var users: [String]?
        if let account = notification.appTransaction?.appTransactionID, !account.isEmpty, event != nil {
            guard let read = await worker.transition(reading: "read_apple_account_users", {
                try await worker.store.appleAccountUsers(account)
            }) else { return }
            users = read
        }
        let refundRequest = refundRequestMark(of: notification, rule: rule)
        await held.move(by: RecordNotification.self) { [users] in
            try await worker.store.recordNotification(
                payload, member: worker.member, job: job, result: result ?? (original == nil ? "ignored" : "recorded"), entry: entry,
                in: original.map { .history(originalTransactionID: $0) } ?? .nothing, event: event, users: users,
                refundRequest: refundRequest)
        }
    }

    /// A refund request (`CONSUMPTION_REQUEST`, its reason or `unknown`) or Apple's decline of one
    /// (`REFUND_DECLINED`), for a purchase of the catalog: what its grant record keeps or its
    /// event reads, so that the outcome is counted by the request's reason (a refund's, by
    /// `revoke_grant`).
    private func refundRequestMark(of notification: VerifiedNotification, rule: String?) -> RecordNotification.RefundRequestMark? {
        guard let transaction = notification.transaction,
            let unit = catalog.grantUnit(for: InAppTransaction(signed: transaction))
        else { return nil }
        switch notification.notificationType {
        case .consumptionRequest:
            let reason = notification.consumptionRequestReason.flatMap { $0.isEmpty ? nil : $0 } ?? "unknown"
            return .asked(unit: unit, reason: reason, rule: rule)
        case .refundDeclined: return .declined(unit: unit)
        default: return nil
        }
    }

    /// What is kept of a notification that changes no grant.
    struct NotificationEntry: Encodable {
        var type: String
        var subtype: String?
        var uuid: String
        var signedDate: Int64?
        var transactionID: String?
        var expiresDate: Int64?
        var autoRenewStatus: Int?

        init(_ notification: VerifiedNotification) {
            type = notification.type
            subtype = notification.subtype
            uuid = notification.uuid
            signedDate = notification.signedDate
            transactionID = notification.transaction?.transactionID
            expiresDate = notification.transaction?.expiresDate
            autoRenewStatus = notification.renewal?.autoRenewStatus
        }

        enum CodingKeys: String, CodingKey {
            case type, subtype, uuid
            case signedDate = "signed_date"
            case transactionID = "transaction_id"
            case expiresDate = "expires_date"
            case autoRenewStatus = "auto_renew_status"
        }
    }
}
