import AppleReceipt
import Foundation
import PlainJSON

/// A job's JSON, read and written by hand: the stages decode and encode a job at every step,
/// and Foundation's coders were a third of a stage's CPU. Members are those of `Job.CodingKeys`;
/// the text is canonical (sorted members), so the same job always has the same bytes.
extension Job {
    package init(json: JSONValue) throws(JSONShapeError) {
        ticket = try json.string("ticket")
        let stage = try json.string("stage")
        guard let known = Stage(rawValue: stage) else { throw JSONShapeError(member: "stage", reason: "unknown stage \(stage)") }
        self.stage = known
        userID = try json.string("user_id")
        receiptData = try json.stringIfPresent("receipt_data")
        signedTransaction = try json.stringIfPresent("signed_transaction")
        signedAppTransaction = try json.stringIfPresent("signed_app_transaction")
        appleAccount = try json.stringIfPresent("apple_account")
        productID = try json.stringIfPresent("product_id")
        transactionID = try json.stringIfPresent("transaction_id")
        source = try json.stringIfPresent("source")
        currency = try json.stringIfPresent("currency")
        bundleID = try json.stringIfPresent("bundle_id")
        refundLimit = try json.intIfPresent("refund_limit")
        appleAccountLimit = try json.intIfPresent("apple_account_limit")
        sharing = try json.stringIfPresent("sharing").map { text throws(JSONShapeError) in
            guard let policy = SharingPolicy(rawValue: text) else { throw JSONShapeError(member: "sharing", reason: "unknown policy \(text)") }
            return policy
        }
        subscriptionReceipt = try json.stringIfPresent("subscription_receipt")
        webhookEvent = try json.stringIfPresent("webhook_event")
        syncEnvironment = try json.stringIfPresent("sync_environment")
        historyRevision = try json.stringIfPresent("history_revision")
        dryRun = try json.boolIfPresent("dry_run")
        part = try json.stringIfPresent("part")
        recheck = try json.objectIfPresent("recheck").map { value throws(JSONShapeError) in try RecheckRequest(json: value) }
        appAccountTokenRequest = try json.objectIfPresent("set_app_account_token").map { value throws(JSONShapeError) in
            try AppAccountTokenRequest(json: value)
        }
        finishTransactionRequest = try json.objectIfPresent("finish_transaction").map { value throws(JSONShapeError) in
            try FinishTransactionRequest(json: value)
        }
        attempts = try json.int("attempts")
        enqueuedAt = try json.int64("enqueued_at")
        appleFailedAt = try json.int64IfPresent("apple_failed_at")
        receipt = try json.objectIfPresent("receipt").map { receipt throws(JSONShapeError) in try VerifiedReceipt(json: receipt) }
        if let items = try json.arrayIfPresent("purchases") {
            var purchases: [Purchase] = []
            purchases.reserveCapacity(items.count)
            for item in items { purchases.append(try Purchase(json: item)) }
            self.purchases = purchases
        } else {
            purchases = nil
        }
        // Only the notify stage carries one: read with Foundation, off the hot path.
        if let notification = try json.objectIfPresent("notification") {
            do {
                self.notification = try JSONDecoder().decode(VerifiedNotification.self, from: Data(notification.canonicalText.utf8))
            } catch {
                throw JSONShapeError(member: "notification", reason: "\(error)")
            }
        } else {
            notification = nil
        }
    }

    package var json: JSONValue {
        .members([
            "ticket": .string(ticket),
            "stage": .string(stage.rawValue),
            "user_id": .string(userID),
            "receipt_data": receiptData.json,
            "signed_transaction": signedTransaction.json,
            "signed_app_transaction": signedAppTransaction.json,
            "apple_account": appleAccount.json,
            "product_id": productID.json,
            "transaction_id": transactionID.json,
            "source": source.json,
            "currency": currency.json,
            "bundle_id": bundleID.json,
            "refund_limit": refundLimit.map { .int($0) },
            "apple_account_limit": appleAccountLimit.map { .int($0) },
            "sharing": sharing.map { .string($0.rawValue) },
            "recheck": recheck?.json,
            "set_app_account_token": appAccountTokenRequest?.json,
            "finish_transaction": finishTransactionRequest?.json,
            "subscription_receipt": subscriptionReceipt.json,
            "webhook_event": webhookEvent.json,
            "sync_environment": syncEnvironment.json,
            "history_revision": historyRevision.json,
            "dry_run": dryRun == true ? .bool(true) : nil,
            "part": part.json,
            "notification": notification.map(Self.json(of:)),
            "attempts": .int(attempts),
            "enqueued_at": .int(enqueuedAt),
            "apple_failed_at": appleFailedAt.map { .int($0) },
            "receipt": receipt?.json,
            "purchases": purchases.map { .array($0.map(\.json)) },
        ])
    }

    private static func json(of notification: VerifiedNotification) -> JSONValue {
        do {
            return try JSONValue(parsing: Array(canonicalJSON(notification)))
        } catch {
            preconditionFailure("Foundation's JSON text did not parse: \(error)")
        }
    }

    package func encoded() -> String { json.canonicalText }

    package static func decode(_ payload: String) throws -> Job {
        try Job(json: JSONValue(parsing: payload))
    }
}
