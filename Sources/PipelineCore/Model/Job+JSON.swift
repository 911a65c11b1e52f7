import AppleReceipt
import Foundation
import PlainJSON

/// A job's JSON, read and written by hand: the stages decode and encode a job at every step,
/// and Foundation's coders were a third of a stage's CPU. One flat object: the envelope's
/// members and the work's, which the stage names (the same members as before the work was
/// typed, so a job queued by the previous version is read, and it reads what this one writes).
/// The text is canonical (sorted members), so the same job always has the same bytes.
extension Job {
    package init(json: JSONValue) throws(JSONShapeError) {
        ticket = try json.string("ticket")
        let stage = try json.string("stage")
        guard let known = Stage(rawValue: stage) else { throw JSONShapeError(member: "stage", reason: "unknown stage \(stage)") }
        self.stage = known
        userID = try json.string("user_id")
        attempts = try json.int("attempts")
        enqueuedAt = try json.int64("enqueued_at")
        source = try json.stringIfPresent("source")
        bundleID = try json.stringIfPresent("bundle_id")
        part = try json.stringIfPresent("part")
        appleFailedAt = try json.int64IfPresent("apple_failed_at")
        work = try Work(json: json, stage: known, source: source)
    }

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

    package static func decode(_ payload: String) throws -> Job {
        try Job(json: JSONValue(parsing: payload))
    }
}

extension Job.Work {
    /// The work of a job of `stage`, from the job's members; a job without the work its stage
    /// needs is not a job (the runtime dead-letters it, `undecodable_job`).
    init(json: JSONValue, stage: Stage, source: String?) throws(JSONShapeError) {
        switch stage {
        case .verify: self = .verify(try Job.ToVerify(json: json, source: source))
        case .dedupe: self = .dedupe(try Job.Verified(json: json))
        case .grant: self = .grant(try Job.Claimed(json: json))
        case .notify: self = try Self.notifyWork(json)
        case .webhook:
            self = .delivery(event: try json.stringIfPresent("webhook_event"), destination: try json.stringIfPresent("destination"))
        }
    }

    private static func notifyWork(_ json: JSONValue) throws(JSONShapeError) -> Self {
        if let request = try json.objectIfPresent("set_app_account_token") {
            return .setAppAccountToken(try AppAccountTokenRequest(json: request))
        }
        if let request = try json.objectIfPresent("finish_transaction") {
            return .finishTransaction(try FinishTransactionRequest(json: request))
        }
        guard let notification = try json.objectIfPresent("notification") else {
            throw JSONShapeError(member: "notification", reason: "a notify job without its notification")
        }
        // Read with Foundation, off the hot path.
        do {
            return .notification(try JSONDecoder().decode(VerifiedNotification.self, from: Data(notification.canonicalText.utf8)))
        } catch {
            throw JSONShapeError(member: "notification", reason: "\(error)")
        }
    }

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
    init(json: JSONValue, source: String?) throws(JSONShapeError) {
        productID = try json.stringIfPresent("product_id")
        transactionID = try json.stringIfPresent("transaction_id")
        currency = try json.stringIfPresent("currency")
        dryRun = try json.boolIfPresent("dry_run") ?? false
        if let receipt = try json.stringIfPresent("receipt_data") {
            evidence = .receipt(receipt)
        } else if let jws = try json.stringIfPresent("signed_transaction") {
            evidence = .signedTransaction(jws)
        } else if let jws = try json.stringIfPresent("signed_app_transaction") {
            evidence = .appTransaction(jws)
        } else if let transactionID {
            evidence = .transactionLookup(transactionID)
        } else if let recheck = try json.objectIfPresent("recheck") {
            evidence = .recheck(try RecheckRequest(json: recheck))
        } else if source == Job.syncSource, let account = try json.stringIfPresent("apple_account") {
            evidence = .accountSync(account, environment: try json.stringIfPresent("sync_environment"))
        } else {
            throw JSONShapeError(member: "receipt_data", reason: "a verify job without evidence")
        }
    }

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
    init(json: JSONValue) throws(JSONShapeError) {
        receipt = try json.objectIfPresent("receipt").map { receipt throws(JSONShapeError) in try VerifiedReceipt(json: receipt) }
        appleAccount = try json.stringIfPresent("apple_account")
        historyRevision = try json.stringIfPresent("history_revision")
        subscriptionReceipt = try json.stringIfPresent("subscription_receipt")
        currency = try json.stringIfPresent("currency")
        productID = try json.stringIfPresent("product_id")
        transactionID = try json.stringIfPresent("transaction_id")
        dryRun = try json.boolIfPresent("dry_run") ?? false
    }

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
    /// Reads a grant job; one written before the receipt stopped at dedupe (`receipt`, read once
    /// and taken apart as dedupe now does) too, so a job queued by the previous version is granted.
    init(json: JSONValue) throws(JSONShapeError) {
        guard let items = try json.arrayIfPresent("purchases") else {
            throw JSONShapeError(member: "purchases", reason: "a grant job without its purchases")
        }
        var purchases: [Purchase] = []
        purchases.reserveCapacity(items.count)
        for item in items { purchases.append(try Purchase(json: item)) }
        let refundLimit = try json.intIfPresent("refund_limit")
        let appleAccountLimit = try json.intIfPresent("apple_account_limit")
        let sharing = try json.stringIfPresent("sharing").map { text throws(JSONShapeError) in
            guard let policy = SharingPolicy(rawValue: text) else { throw JSONShapeError(member: "sharing", reason: "unknown policy \(text)") }
            return policy
        }
        let subscriptionReceipt = try json.stringIfPresent("subscription_receipt")
        if let receipt = try json.objectIfPresent("receipt") {
            self.init(
                purchases: purchases, receipt: try VerifiedReceipt(json: receipt), refundLimit: refundLimit,
                appleAccountLimit: appleAccountLimit, sharing: sharing, subscriptionReceipt: subscriptionReceipt)
            return
        }
        self.init(
            purchases: purchases, receipt: nil, refundLimit: refundLimit, appleAccountLimit: appleAccountLimit, sharing: sharing,
            subscriptionReceipt: subscriptionReceipt)
        environment = try json.stringIfPresent("environment")
        appBundleID = try json.stringIfPresent("app_bundle_id")
        renewal = try json.objectIfPresent("renewal").map { value throws(JSONShapeError) in try SubscriptionRenewal(json: value) }
        renewalPeriod = try json.objectIfPresent("renewal_period").map { value throws(JSONShapeError) in
            try InAppTransaction(json: value)
        }
    }

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
