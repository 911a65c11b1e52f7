import AppleJWS
import PipelineCore
import RedisClient

/// The notify stage's steps: a notification accepted, revocations and reinstatements, subscription
/// changes, the notification's record, app account tokens.
extension PipelineStore {
    /// Stores a verified notification and queues it, or returns the ticket its UUID already has.
    /// It goes to the bucket of the purchase it is about (so its steps find the purchase's keys
    /// beside its own), or for one about no transaction, the bucket its UUID's hash picks.
    package func acceptNotification(_ job: Job, uuid: String, ttl: Duration) async throws -> (ticket: String, created: Bool) {
        let bucket = keys.layout.bucket(ofNotification: uuid, originalTransactionID: job.notification?.originalTransactionID)
        var job = job
        job.ticket = keys.layout.ticketID(job.ticket, inBucket: bucket)
        // The token's binding is read first (it lives in its own slot; a binding never changes).
        var tokenUser: String?
        if let token = job.notification?.appAccountToken?.lowercased() {
            tokenUser = try await redis.send("GET", keys.accountToken(token)).string
        }
        return try await run(AcceptNotification(keys.inBucket(bucket), job: job, uuid: uuid, ttl: ttl, tokenUser: tokenUser), replicated: true)
    }

    /// A transaction Apple signed, read from the Server API and verified, stored as the notification
    /// of `type` Apple would send about it (a refund found in the refund history, an extension Apple
    /// confirmed) through `accept_notification`: once per `uuid`, applied by the notify stage like
    /// Apple's own, its entries carrying `source`.
    package func acceptFound(
        _ transaction: JWSTransaction, as type: NotificationType, uuid: String, signedDate: Int64?, source: String, ttl: Duration
    ) async throws -> (ticket: String, created: Bool) {
        let payload = NotificationPayload(
            notificationType: type.rawValue, notificationUUID: uuid, signedDate: signedDate,
            data: .init(bundleID: transaction.bundleID, environment: transaction.environment, signedTransactionInfo: nil))
        let job = Job(
            ticket: TicketID.make(), stage: .notify, userID: "",
            work: .notification(VerifiedNotification(payload, transaction: transaction, renewal: nil)), source: source,
            enqueuedAt: currentTimeMs())
        return try await acceptNotification(job, uuid: uuid, ttl: ttl)
    }

    /// The ticket a stored notification got (`notification:<uuid>`), looked for where the intake
    /// puts one about no purchase (a test notification) or, with `originalTransactionID`, about it.
    package func notificationTicket(uuid: String, originalTransactionID: String? = nil) async throws -> String? {
        let bucket = keys.layout.bucket(ofNotification: uuid, originalTransactionID: originalTransactionID)
        return try await redis.send("GET", keys.inBucket(bucket).notification(uuid: uuid)).string
    }

    /// REFUND / REVOKE of `unit`, in whole or (a consumable's prorated refund) in part; returns the
    /// result (`revoked`, `partially_revoked`, `already_revoked`, `refund_remembered`) when it
    /// moved. `subscription`: the period's subscription becomes `revoked` with it.
    package func revoke(
        _ payload: String, member: String, job: Job, unit: String, originalTransactionID: String, revocation: Revocation,
        subscription: SubscriptionChange? = nil, now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, String?) {
        try await run(RevokeGrant(
            keys, member: member, taken: payload, job: job, unit: unit, originalTransactionID: originalTransactionID,
            revocation: revocation, subscription: subscription, recheck: recheck, now: now))
    }

    /// REFUND_REVERSED of `unit`; returns the result (`reinstated`, `refund_forgotten`, `not_revoked`)
    /// when it moved. `subscription`: the period's subscription's status as the transaction now says.
    package func reinstate(
        _ payload: String, member: String, job: Job, unit: String, originalTransactionID: String,
        subscription: SubscriptionChange? = nil, now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, String?) {
        try await run(ReinstateGrant(
            keys, member: member, taken: payload, job: job, unit: unit, originalTransactionID: originalTransactionID,
            subscription: subscription, recheck: recheck, now: now))
    }

    /// A notification that moves a subscription without a grant: applied to its record in
    /// signed-time order, kept on its history; returns what applying it did (`applied`, `stale`,
    /// `unknown_subscription`) when it moved.
    package func applySubscriptionNotification(
        _ payload: String, member: String, job: Job, change: SubscriptionChange, entry: String, event: [String: String]? = nil,
        now: Int64 = currentTimeMs()
    ) async throws -> (TransitionResult, String?) {
        try await run(ApplySubscriptionNotification(
            keys, member: member, taken: payload, job: job, change: change, entry: entry, event: event, recheck: recheck, now: now))
    }

    /// Where `record_notification` keeps an entry.
    package enum NotificationRecord: Sendable {
        /// On the original transaction's list (newest first).
        case history(originalTransactionID: String)
        /// In its bucket's `unclaimed`, under the transaction id, until a user submits it.
        case unclaimed(transactionID: String, originalTransactionID: String)
        /// Nowhere: only the ticket is finished.
        case nothing
    }

    package func recordNotification(
        _ payload: String, member: String, job: Job, result: String, entry: String, in record: NotificationRecord,
        event: [String: String]? = nil, users: [String]? = nil, refundRequest: RecordNotification.RefundRequestMark? = nil,
        now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        try await run(RecordNotification(
            keys, member: member, taken: payload, job: job, result: result, entry: entry, in: record, event: event, users: users,
            refundRequest: refundRequest, now: now))
    }

    /// The user an app account token or an original transaction belongs to, token first.
    package func account(appAccountToken: String?, originalTransactionID: String, appTransactionID: String? = nil) async throws -> String? {
        if let token = appAccountToken?.lowercased(), let user = try await redis.send("GET", keys.accountToken(token)).string {
            return user
        }
        if let owner = try await redis.send("GET", keys.owner(originalTransactionID: originalTransactionID)).string { return owner }
        // No token: the one user seated on the Apple Account that bought it, if there is only one.
        guard appAccountToken == nil, let account = appTransactionID, !account.isEmpty else { return nil }
        return try await onlyUserSeated(onAppleAccount: account)
    }

    /// The user seated on an Apple Account when exactly one is (`apple-account:<id>`'s `u:<user>`).
    package func onlyUserSeated(onAppleAccount appTransactionID: String) async throws -> String? {
        let seats = try await redis.send("HGETALL", keys.appleAccount(appTransactionID))
        if case .error(let message) = seats { throw RedisError.server(message) }
        let users = seats.stringDictionary.keys.filter { $0.hasPrefix("u:") }
        return users.count == 1 ? String(users[users.startIndex].dropFirst(2)) : nil
    }

    /// The users the app account tokens are bound to (lowercase tokens; an unbound one is absent):
    /// one GET each, since on a cluster each token's key lies in a slot of its own.
    package func owners(ofAccountTokens tokens: Set<String>) async throws -> [String: String] {
        var owners: [String: String] = [:]
        for token in tokens {
            if let user = try await redis.send("GET", keys.accountToken(token.lowercased())).string { owners[token.lowercased()] = user }
        }
        return owners
    }

    /// Binds an app account token to a user unless it is bound already; returns the user it is bound to.
    package func bindAccountToken(_ token: String, to user: String) async throws -> String {
        let token = token.lowercased()
        return try await bindAccountTokens([token], to: user)[token] ?? user
    }
}
