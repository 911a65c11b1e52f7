import AppleJWS
import AppleReceipt
import Foundation

/// Notify stage: applies one App Store Server Notification, verified at the intake's door.
/// REFUND and REVOKE take the grant back (or keep a grant from happening), REFUND_REVERSED gives it
/// back, a purchase Apple reports (ONE_TIME_CHARGE, SUBSCRIBED, DID_RENEW, OFFER_REDEEMED) enters
/// the dedupe → grant path for its account or waits unclaimed, and everything else is kept per
/// original transaction. Unknown types never fail.
public struct NotifyHandler: JobHandler {
    public let stage = Stage.notify
    public let catalog: ProductCatalog

    static let revocations: Set<String> = ["REFUND", "REVOKE"]
    static let reversal = "REFUND_REVERSED"
    static let purchases: Set<String> = ["ONE_TIME_CHARGE", "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED"]

    public init(catalog: ProductCatalog) {
        self.catalog = catalog
    }

    public func handle(_ payload: String, worker: WorkerContext) async {
        guard let job = try? Job.decode(payload), job.stage == .notify else {
            await worker.deadLetter(payload, ticket: nil, reason: ReasonCode.undecodableJob, error: "not a notify job", attempts: 0)
            return
        }
        guard let notification = job.notification else {
            await worker.deadLetter(payload, ticket: job.ticket, reason: ReasonCode.undecodableJob, error: "a notify job without its notification", attempts: 0)
            return
        }
        if Self.revocations.contains(notification.type) || notification.type == Self.reversal,
           let transaction = notification.transaction {
            await revokeOrReinstate(transaction, notification: notification, payload: payload, job: job, worker: worker)
        } else if Self.purchases.contains(notification.type), let transaction = notification.transaction {
            await grantToAccount(transaction, notification: notification, payload: payload, job: job, worker: worker)
        } else {
            await record(notification, payload: payload, job: job, worker: worker)
        }
    }

    private func unit(of transaction: JWSTransaction, payload: String, job: Job, worker: WorkerContext) async -> String? {
        if let unit = catalog.grantUnit(for: InAppTransaction(signed: transaction)) { return unit }
        // As in dedupe: a product our catalog does not know waits for the catalog fix and a replay.
        await worker.deadLetter(
            payload, ticket: job.ticket, reason: ReasonCode.unknownProduct,
            error: "not in the product catalog: \(transaction.productID); add to IAP_PRODUCTS_FILE, then replay", attempts: 0)
        return nil
    }

    private func revokeOrReinstate(
        _ transaction: JWSTransaction, notification: VerifiedNotification, payload: String, job: Job, worker: WorkerContext
    ) async {
        guard let unit = await unit(of: transaction, payload: payload, job: job, worker: worker) else { return }
        let reversal = notification.type == Self.reversal
        let step = reversal ? "reinstate_grant" : "revoke_grant"
        let outcome = await worker.transition(step) {
            reversal
                ? try await worker.store.reinstate(payload, member: worker.member, job: job, unit: unit)
                : try await worker.store.revoke(
                    payload, member: worker.member, job: job, unit: unit,
                    reason: transaction.revocationReason.map(String.init) ?? "",
                    type: transaction.revocationType ?? notification.type)
        }
        guard let (result, applied) = outcome else { return }
        if result == .moved {
            worker.logger.info("notification applied", metadata: [
                "type": "\(notification.type)", "unit": "\(unit)", "result": "\(applied ?? "?")",
            ])
        }
        await worker.settle(result, payload: payload, job: job, what: step)
    }

    private func grantToAccount(
        _ transaction: JWSTransaction, notification: VerifiedNotification, payload: String, job: Job, worker: WorkerContext
    ) async {
        let found = await worker.transition("find_account") {
            try await worker.store.account(
                appAccountToken: transaction.appAccountToken, originalTransactionID: transaction.originalTransactionID)
        }
        guard let user = found else { return }
        guard let user else {
            // Nobody we know bought it: it waits until a user proves it (any evidence), then is granted once.
            let entry = String(decoding: canonicalJSON(transaction), as: UTF8.self)
            let result = await worker.transition("record_notification") {
                try await worker.store.recordNotification(
                    payload, member: worker.member, job: job, result: "unclaimed", entry: entry,
                    in: .unclaimed(transactionID: transaction.transactionID))
            }
            await worker.settle(result, payload: payload, job: job, what: "record_notification")
            return
        }
        var next = job
        next.stage = .dedupe
        next.userID = user
        next.source = "notification"
        next.receipt = VerifiedReceipt(signed: transaction)
        next.notification = nil
        let result = await worker.transition("forward_job") {
            try await worker.forward(
                payload, to: next,
                ticketFields: [("user_id", user), ("environment", next.receipt?.environment ?? ""), ("attempts", "1")])
        }
        await worker.settle(result, payload: payload, job: job, what: "forward_job")
    }

    private func record(_ notification: VerifiedNotification, payload: String, job: Job, worker: WorkerContext) async {
        let entry = String(decoding: canonicalJSON(NotificationEntry(notification)), as: UTF8.self)
        let original = notification.originalTransactionID
        let result = await worker.transition("record_notification") {
            try await worker.store.recordNotification(
                payload, member: worker.member, job: job, result: original == nil ? "ignored" : "recorded", entry: entry,
                in: original.map { .history(originalTransactionID: $0) } ?? .nothing)
        }
        await worker.settle(result, payload: payload, job: job, what: "record_notification")
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
