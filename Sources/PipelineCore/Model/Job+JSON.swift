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

    package var json: JSONValue {
        var members: JSONObject = [
            "ticket": .string(ticket), "stage": .string(stage.rawValue), "user_id": .string(userID), "attempts": .int(attempts),
            "enqueued_at": .int(enqueuedAt),
        ]
        members["source"] = source.json
        members["bundle_id"] = bundleID.json
        members["part"] = part.json
        members["apple_failed_at"] = appleFailedAt.map { .int($0) }
        work.add(to: &members)
        return .object(members)
    }

    package func encoded() -> String { json.canonicalText }

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

    func add(to members: inout JSONObject) {
        switch self {
        case .verify(let work): work.add(to: &members)
        case .dedupe(let work): work.add(to: &members)
        case .grant(let work): work.add(to: &members)
        case .notification(let notification): members["notification"] = Self.json(of: notification)
        case .setAppAccountToken(let request): members["set_app_account_token"] = request.json
        case .finishTransaction(let request): members["finish_transaction"] = request.json
        case .delivery(let event, let destination):
            members["webhook_event"] = event.json
            members["destination"] = destination.json
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

    func add(to members: inout JSONObject) {
        switch evidence {
        case .receipt(let receipt): members["receipt_data"] = .string(receipt)
        case .signedTransaction(let jws): members["signed_transaction"] = .string(jws)
        case .appTransaction(let jws): members["signed_app_transaction"] = .string(jws)
        case .transactionLookup(let id): members["transaction_id"] = .string(id)
        case .recheck(let request): members["recheck"] = request.json
        case .accountSync(let account, let environment):
            members["apple_account"] = .string(account)
            members["sync_environment"] = environment.json
        }
        members["product_id"] = productID.json
        if let transactionID { members["transaction_id"] = .string(transactionID) }
        members["currency"] = currency.json
        members["dry_run"] = dryRun ? .bool(true) : nil
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

    func add(to members: inout JSONObject) {
        members["receipt"] = receipt?.json
        members["apple_account"] = appleAccount.json
        members["history_revision"] = historyRevision.json
        members["subscription_receipt"] = subscriptionReceipt.json
        members["currency"] = currency.json
        members["product_id"] = productID.json
        members["transaction_id"] = transactionID.json
        members["dry_run"] = dryRun ? .bool(true) : nil
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

    func add(to members: inout JSONObject) {
        members["purchases"] = .array(purchases.map(\.json))
        members["environment"] = environment.json
        members["app_bundle_id"] = appBundleID.json
        members["renewal"] = renewal?.json
        members["renewal_period"] = renewalPeriod?.json
        members["refund_limit"] = refundLimit.map { .int($0) }
        members["apple_account_limit"] = appleAccountLimit.map { .int($0) }
        members["sharing"] = sharing.map { .string($0.rawValue) }
        members["subscription_receipt"] = subscriptionReceipt.json
    }
}
