import AppleReceipt
import Foundation
import PlainJSON

/// A job's JSON, read and written by hand: the stages decode and encode a job at every step,
/// and Foundation's coders were a third of a stage's CPU. One flat object: the envelope's
/// members and the work's, which the stage names (the same members as before the work was
/// typed, so a job queued by the previous version is read, and it reads what this one writes).
/// The text is canonical (sorted members), so the same job always has the same bytes.
extension Job {
    /// The job as a tree (its text read back: for the callers that want a value, off the hot path).
    package var json: JSONValue { CanonicalJSONWriter.value(write) }

    /// The job's canonical text, written straight from its values (no tree: a stage writes the
    /// next job at every step).
    package func encoded() -> String { CanonicalJSONWriter.text(write) }

    /// The envelope's members, then the work's (the writer puts them in name order).
    func write(to json: inout CanonicalJSONWriter) {
        json.openObject()
        json.member("apple_failed_at", int64: appleFailedAt)
        json.member("attempts", int: attempts)
        json.member("bundle_id", bundleID)
        json.member("enqueued_at", int64: enqueuedAt)
        json.member("part", part)
        json.member("source", source)
        json.member("stage", stage.rawValue)
        json.member("ticket", ticket)
        json.member("user_id", userID)
        work.write(to: &json)
        json.closeObject()
    }
}

extension Job.Work {
    func write(to json: inout CanonicalJSONWriter) {
        switch self {
        case .verify(let work): work.write(to: &json)
        case .dedupe(let work): work.write(to: &json)
        case .grant(let work): work.write(to: &json)
        case .notification(let notification): json.member("notification", value: Self.json(of: notification))
        case .setAppAccountToken(let request):
            json.name("set_app_account_token")
            request.write(to: &json)
        case .finishTransaction(let request):
            json.name("finish_transaction")
            request.write(to: &json)
        case .delivery(let event, let destination):
            json.member("webhook_event", event)
            json.member("destination", destination)
        }
    }

    private static func json(of notification: VerifiedNotification) -> JSONValue {
        do {
            return try JSONValue(parsing: Array(canonicalJSON(notification)))
        } catch {
            preconditionFailure("Foundation's JSON text did not parse: \(error)")
        }
    }
}

extension Job.ToVerify {
    func write(to json: inout CanonicalJSONWriter) {
        switch evidence {
        case .receipt(let receipt): json.member("receipt_data", receipt)
        case .signedTransaction(let jws): json.member("signed_transaction", jws)
        case .appTransaction(let jws): json.member("signed_app_transaction", jws)
        case .transactionLookup(let id) where transactionID == nil: json.member("transaction_id", id)
        case .transactionLookup: break
        case .recheck(let request):
            json.name("recheck")
            request.write(to: &json)
        case .accountSync(let account, let environment):
            json.member("apple_account", account)
            json.member("sync_environment", environment)
        }
        json.member("product_id", productID)
        json.member("transaction_id", transactionID)
        json.member("currency", currency)
        if dryRun { json.member("dry_run", bool: true) }
    }
}

extension Job.Verified {
    func write(to json: inout CanonicalJSONWriter) {
        json.member("apple_account", appleAccount)
        json.member("currency", currency)
        if dryRun { json.member("dry_run", bool: true) }
        json.member("history_revision", historyRevision)
        json.member("product_id", productID)
        if let receipt {
            json.name("receipt")
            receipt.write(to: &json)
        }
        json.member("subscription_receipt", subscriptionReceipt)
        json.member("transaction_id", transactionID)
    }
}

extension Job.Claimed {
    func write(to json: inout CanonicalJSONWriter) {
        json.member("app_bundle_id", appBundleID)
        json.member("apple_account_limit", int: appleAccountLimit)
        json.member("environment", environment)
        json.name("purchases")
        json.openArray()
        for purchase in purchases { purchase.write(to: &json) }
        json.closeArray()
        json.member("refund_limit", int: refundLimit)
        if let renewal {
            json.name("renewal")
            renewal.write(to: &json)
        }
        if let renewalPeriod {
            json.name("renewal_period")
            renewalPeriod.write(to: &json)
        }
        json.member("sharing", sharing?.rawValue)
        json.member("subscription_receipt", subscriptionReceipt)
    }
}
