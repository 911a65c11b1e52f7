import AppleReceipt
import Foundation
import PlainJSON

/// A job read straight from its text: each member into its field as the cursor comes to it
/// (`JSONCursor`), then the envelope checked and the work its stage names made from the fields.
/// Every stage reads the job it takes; reading it as a tree first and looking each field up in
/// it was 63 thousand instructions of a grant job (callgrind), most of it the tree. The members
/// and their rules are those of the tree's reader before: what is `null` is absent, a member of
/// the wrong type is an error, a job without the work its stage needs is not a job (the runtime
/// dead-letters it, `undecodable_job`), and a job queued by an earlier version is read.
extension Job {
    package static func decode(_ payload: String) throws -> Job {
        try JSONCursor.read(payload) { cursor throws(JSONShapeError) in try Job(reading: &cursor) }
    }

    /// A job from a tree (its text read again: for a caller that has one, off the hot path).
    package init(json: JSONValue) throws(JSONShapeError) {
        self = try JSONCursor.read(json.canonicalText) { cursor throws(JSONShapeError) in try Job(reading: &cursor) }
    }

    init(reading json: inout JSONCursor) throws(JSONShapeError) {
        var members = Members()
        let isObject = try json.members(asMember: "job") { name, value throws(JSONShapeError) in try members.take(name, &value) }
        guard isObject else { throw JSONShapeError(member: "ticket", reason: "not in an object") }
        try self.init(members)
    }

    private init(_ members: Members) throws(JSONShapeError) {
        guard let ticket = members.ticket else { throw Members.missing("ticket") }
        guard let stage = members.stage else { throw Members.missing("stage") }
        guard let known = Stage(rawValue: stage) else { throw JSONShapeError(member: "stage", reason: "unknown stage \(stage)") }
        guard let userID = members.userID else { throw Members.missing("user_id") }
        guard let attempts = members.attempts else { throw Members.missing("attempts") }
        guard let enqueuedAt = members.enqueuedAt else { throw Members.missing("enqueued_at") }
        // Each field set once, in place (no job built and then copied into `self`).
        self.ticket = ticket
        self.stage = known
        self.userID = userID
        self.attempts = attempts
        self.enqueuedAt = enqueuedAt
        work = try Work(members, stage: known)
        source = members.source
        bundleID = members.bundleID
        part = members.part
        appleFailedAt = members.appleFailedAt
    }
}

extension Job {
    /// Every member a job of any stage may have, as read: the work is made from them once the
    /// stage is known (canonical text puts `stage` after most of them). Members that only an
    /// errand or a rare job has are kept as trees and read by their models.
    fileprivate struct Members {
        var ticket: String?
        var stage: String?
        var userID: String?
        var attempts: Int?
        var enqueuedAt: Int64?
        var source: String?
        var bundleID: String?
        var part: String?
        var appleFailedAt: Int64?
        var productID: String?
        var transactionID: String?
        var currency: String?
        var dryRun: Bool?
        var receiptData: String?
        var signedTransaction: String?
        var signedAppTransaction: String?
        var recheck: JSONValue?
        var appleAccount: String?
        var syncEnvironment: String?
        var receipt: VerifiedReceipt?
        var historyRevision: String?
        var subscriptionReceipt: String?
        var purchases: [Purchase]?
        var refundLimit: Int?
        var appleAccountLimit: Int?
        var sharing: String?
        var environment: String?
        var appBundleID: String?
        var renewal: JSONValue?
        var renewalPeriod: InAppTransaction?
        var setAppAccountToken: JSONValue?
        var finishTransaction: JSONValue?
        var notification: JSONValue?
        var webhookEvent: String?
        var destination: String?

        static func missing(_ member: String) -> JSONShapeError { JSONShapeError(member: member, reason: "missing") }

        /// The member `name`, if it is a job's: the envelope's first, then the work's.
        mutating func take(_ name: JSONName, _ value: inout JSONCursor) throws(JSONShapeError) {
            switch name {
            case "ticket": ticket = try value.string(asMember: "ticket")
            case "stage": stage = try value.string(asMember: "stage")
            case "user_id": userID = try value.string(asMember: "user_id")
            case "attempts": attempts = try value.int(asMember: "attempts")
            case "enqueued_at": enqueuedAt = try value.int64(asMember: "enqueued_at")
            case "source": source = try value.string(asMember: "source")
            case "bundle_id": bundleID = try value.string(asMember: "bundle_id")
            case "part": part = try value.string(asMember: "part")
            case "apple_failed_at": appleFailedAt = try value.int64(asMember: "apple_failed_at")
            default: try takeWork(name, &value)
            }
        }

        private mutating func takeWork(_ name: JSONName, _ value: inout JSONCursor) throws(JSONShapeError) {
            switch name {
            case "product_id": productID = try value.string(asMember: "product_id")
            case "transaction_id": transactionID = try value.string(asMember: "transaction_id")
            case "currency": currency = try value.string(asMember: "currency")
            case "dry_run": dryRun = try value.bool(asMember: "dry_run")
            case "receipt_data": receiptData = try value.string(asMember: "receipt_data")
            case "signed_transaction": signedTransaction = try value.string(asMember: "signed_transaction")
            case "signed_app_transaction": signedAppTransaction = try value.string(asMember: "signed_app_transaction")
            case "recheck": recheck = try value.object(asMember: "recheck")
            case "apple_account": appleAccount = try value.string(asMember: "apple_account")
            case "sync_environment": syncEnvironment = try value.string(asMember: "sync_environment")
            case "receipt": receipt = try value.readNull() ? nil : VerifiedReceipt(reading: &value)
            case "history_revision": historyRevision = try value.string(asMember: "history_revision")
            case "subscription_receipt": subscriptionReceipt = try value.string(asMember: "subscription_receipt")
            case "purchases": purchases = try Self.purchases(&value)
            default: try takeGrantOrErrand(name, &value)
            }
        }

        private mutating func takeGrantOrErrand(_ name: JSONName, _ value: inout JSONCursor) throws(JSONShapeError) {
            switch name {
            case "refund_limit": refundLimit = try value.int(asMember: "refund_limit")
            case "apple_account_limit": appleAccountLimit = try value.int(asMember: "apple_account_limit")
            case "sharing": sharing = try value.string(asMember: "sharing")
            case "environment": environment = try value.string(asMember: "environment")
            case "app_bundle_id": appBundleID = try value.string(asMember: "app_bundle_id")
            case "renewal": renewal = try value.object(asMember: "renewal")
            case "renewal_period": renewalPeriod = try value.readNull() ? nil : InAppTransaction(reading: &value)
            case "set_app_account_token": setAppAccountToken = try value.object(asMember: "set_app_account_token")
            case "finish_transaction": finishTransaction = try value.object(asMember: "finish_transaction")
            case "notification": notification = try value.object(asMember: "notification")
            case "webhook_event": webhookEvent = try value.string(asMember: "webhook_event")
            case "destination": destination = try value.string(asMember: "destination")
            default: break
            }
        }

        private static func purchases(_ value: inout JSONCursor) throws(JSONShapeError) -> [Purchase]? {
            var purchases: [Purchase] = []
            let isArray = try value.items(asMember: "purchases") { item throws(JSONShapeError) in
                purchases.append(try Purchase(reading: &item))
            }
            return isArray ? purchases : nil
        }
    }
}

extension Job.Work {
    /// The work of a job of `stage`, from the job's members.
    fileprivate init(_ members: Job.Members, stage: Stage) throws(JSONShapeError) {
        switch stage {
        case .verify: self = .verify(try Job.ToVerify(members))
        case .dedupe: self = .dedupe(Job.Verified(members))
        case .grant: self = .grant(try Job.Claimed(members))
        case .notify: self = try Self.notifyWork(members)
        case .webhook: self = .delivery(event: members.webhookEvent, destination: members.destination)
        }
    }

    private static func notifyWork(_ members: Job.Members) throws(JSONShapeError) -> Self {
        if let request = members.setAppAccountToken {
            return .setAppAccountToken(try AppAccountTokenRequest(json: request))
        }
        if let request = members.finishTransaction {
            return .finishTransaction(try FinishTransactionRequest(json: request))
        }
        guard let notification = members.notification else {
            throw JSONShapeError(member: "notification", reason: "a notify job without its notification")
        }
        // Read with Foundation, off the hot path.
        do {
            return .notification(try JSONDecoder().decode(VerifiedNotification.self, from: Data(notification.canonicalText.utf8)))
        } catch {
            throw JSONShapeError(member: "notification", reason: "\(error)")
        }
    }
}

extension Job.ToVerify {
    /// The evidence is the first of: receipt, signed transaction, app transaction, transaction
    /// id, subscription to re-check, Apple Account to sync.
    fileprivate init(_ members: Job.Members) throws(JSONShapeError) {
        let evidence: Job.Evidence
        if let receipt = members.receiptData {
            evidence = .receipt(receipt)
        } else if let jws = members.signedTransaction {
            evidence = .signedTransaction(jws)
        } else if let jws = members.signedAppTransaction {
            evidence = .appTransaction(jws)
        } else if let transactionID = members.transactionID {
            evidence = .transactionLookup(transactionID)
        } else if let recheck = members.recheck {
            evidence = .recheck(try RecheckRequest(json: recheck))
        } else if members.source == Job.syncSource, let account = members.appleAccount {
            evidence = .accountSync(account, environment: members.syncEnvironment)
        } else {
            throw JSONShapeError(member: "receipt_data", reason: "a verify job without evidence")
        }
        self.init(
            evidence: evidence, productID: members.productID, transactionID: members.transactionID, currency: members.currency,
            dryRun: members.dryRun ?? false)
    }
}

extension Job.Verified {
    fileprivate init(_ members: Job.Members) {
        self.init(
            receipt: members.receipt, appleAccount: members.appleAccount, historyRevision: members.historyRevision,
            subscriptionReceipt: members.subscriptionReceipt, currency: members.currency, productID: members.productID,
            transactionID: members.transactionID, dryRun: members.dryRun ?? false)
    }
}

extension Job.Claimed {
    /// A grant job; one written before the receipt stopped at dedupe (`receipt`, read once and
    /// taken apart as dedupe now does) too, so a job queued by the previous version is granted.
    fileprivate init(_ members: Job.Members) throws(JSONShapeError) {
        guard let purchases = members.purchases else {
            throw JSONShapeError(member: "purchases", reason: "a grant job without its purchases")
        }
        let sharing = try members.sharing.map { text throws(JSONShapeError) in
            guard let policy = SharingPolicy(rawValue: text) else { throw JSONShapeError(member: "sharing", reason: "unknown policy \(text)") }
            return policy
        }
        self.init(
            purchases: purchases, receipt: members.receipt, refundLimit: members.refundLimit, appleAccountLimit: members.appleAccountLimit,
            sharing: sharing, subscriptionReceipt: members.subscriptionReceipt)
        guard members.receipt == nil else { return }
        environment = members.environment
        appBundleID = members.appBundleID
        renewal = try members.renewal.map { tree throws(JSONShapeError) in try SubscriptionRenewal(json: tree) }
        renewalPeriod = members.renewalPeriod
    }
}
