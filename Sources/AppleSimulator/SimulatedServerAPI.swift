import AppleJWS
@preconcurrency import Crypto
import AsyncHTTPClient
import Foundation
import NIOFoundationCompat
import Hummingbird
import NIOConcurrencyHelpers

/// apple-sim's App Store Server API: the transactions it knows (registered by tests, the demo or
/// the drill), answered signed by its own authority, behind a JWT check with the key's public
/// part, with faults on demand (429 + Retry-After, 5000001) and a log of call times. It also takes
/// Send Consumption Information and Set App Account Token, checks the body as Apple would, and
/// keeps what it was told.
public final class SimulatedServerAPI: Sendable {
    public static let sandboxPrefix = "/sandbox"

    let authority: SigningAuthority
    /// The public part of the `.p8` key tokens must be signed with; `nil` accepts any well-formed token.
    let publicKey: P256.Signing.PublicKey?
    let state = NIOLockedValueBox(State())
    /// Retention Messaging: the real-time URLs, messages, default messages and performance tests.
    let retention = NIOLockedValueBox(RetentionState())

    struct State {
        var transactions: [String: JWSTransaction] = [:]
        /// The transaction ids of each order (the id on the customer's email receipt).
        var orders: [String: [String]] = [:]
        var faults = SimulatedAPIFaults()
        /// Arrival times (ms) of accepted calls per "environment endpoint".
        var calls: [String: [Int64]] = [:]
        /// The app account tokens set per original transaction id (Set App Account Token), oldest first.
        var tokensSet: [String: [String]] = [:]
        /// The `revision` each Get Transaction History call was asked from ("" for none), in order.
        var historyRevisionsAsked: [String] = []
        /// How many times each transaction was finished (Finish Transaction).
        var finished: [String: Int] = [:]
        /// Consumption information accepted per transaction id, oldest first (the JSON bodies).
        var consumption: [String: [[String: String]]] = [:]
        /// The subscriptions it plays, by original transaction id, with when each started.
        var subscriptions: [String: (plan: SimulatedSubscription, start: Int64)] = [:]
        /// Any transaction id of a played subscription → its original transaction id.
        var subscriptionOf: [String: String] = [:]
        /// Where notifications go, per environment (the URL an app gives App Store Connect).
        var notificationURLs: [String: String] = [:]
        /// Test notifications requested, by token.
        var testNotifications: [String: TestNotification] = [:]
        /// Every notification signed, by UUID, and the UUIDs in the order they were made.
        var sent: [String: SentNotification] = [:]
        var sentOrder: [String] = []
        /// The API key of each app that has its own (by bundle id): its tokens are checked with it.
        var appKeys: [String: P256.Signing.PublicKey] = [:]
        /// Apps production does not know yet (never released): their tokens get 401 there.
        var unreleased: Set<String> = []
        /// The waits before each retry of a notification that was not delivered.
        var retryDelays = SimulatedServerAPI.appleRetryDelays
        /// How long one delivery attempt may take (a refused connection is retried until then).
        var deliveryTimeout: Duration = .seconds(10)
        /// Renewal-date extensions per original transaction id: (request identifier, when, days).
        var extensions: [String: [(request: String, at: Int64, days: Int)]] = [:]
        /// Extensions of all active subscribers, by "<environment> <product> <request identifier>".
        var massExtensions: [String: [String: any Sendable]] = [:]
    }

    init(authority: SigningAuthority, publicKey: P256.Signing.PublicKey?) {
        self.authority = authority
        self.publicKey = publicKey
    }

    /// Makes a transaction known to the API, and returns it signed (what StoreKit 2 would give the
    /// app); `orderID`: the order it was bought in, for Look Up Order ID.
    @discardableResult
    public func register(_ transaction: JWSTransaction, orderID: String? = nil) throws -> String {
        var stamped = transaction
        stamped.signedDate = stamped.signedDate ?? Int64(Date().timeIntervalSince1970 * 1000)
        state.withLockedValue { state in
            state.transactions[stamped.transactionID] = stamped
            if let orderID, !(state.orders[orderID]?.contains(stamped.transactionID) ?? false) {
                state.orders[orderID, default: []].append(stamped.transactionID)
            }
        }
        return try authority.signer.sign(payload: stamped)
    }

    /// A signed Server Notification V2 about a registered transaction (or none, for `TEST`). For
    /// REFUND and REVOKE the transaction carries its revocation, as Apple's does. `renewal`: the
    /// subscription's renewal info to sign along (grace period, billing retry, auto-renew).
    /// `appTransaction` (`RESCIND_CONSENT`), `summary` (`RENEWAL_EXTENSION`) or
    /// `externalPurchaseToken` (`EXTERNAL_PURCHASE_TOKEN`): that member instead of `data`.
    public func signedNotification(
        type: String, subtype: String? = nil, transactionID: String?, uuid: String = UUID().uuidString.lowercased(),
        appAppleID: Int64? = nil, renewal: JWSRenewalInfo? = nil, appTransaction: JWSAppTransaction? = nil,
        summary: NotificationPayload.Summary? = nil, externalPurchaseToken: NotificationPayload.ExternalPurchaseToken? = nil,
        consumptionRequestReason: String? = nil, revocationPercentage: Int? = nil
    ) throws -> String {
        var transaction = transactionID.flatMap { id in state.withLockedValue { $0.transactions[id] } }
        if let id = transactionID, transaction == nil { throw SimulatorError("apple-sim knows no transaction \(id)") }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        if type == "REFUND" || type == "REVOKE" {
            transaction?.revocationDate = now
            transaction?.revocationReason = type == "REFUND" ? 1 : 0
            transaction?.revocationType = type == "REFUND" ? Self.refundType(revocationPercentage) : "FAMILY_REVOKE"
            if type == "REFUND" { transaction?.revocationPercentage = revocationPercentage }
        }
        transaction?.signedDate = now
        let signedTransaction = try transaction.map { try authority.signer.sign(payload: $0) }
        var stampedRenewal = renewal
        stampedRenewal?.signedDate = now
        let signedRenewal = try stampedRenewal.map { try authority.signer.sign(payload: $0) }
        var payload = NotificationPayload(
            notificationType: type, subtype: subtype, notificationUUID: uuid, signedDate: now,
            data: .init(
                appAppleID: appAppleID, bundleID: transaction?.bundleID ?? "com.example.game",
                environment: transaction?.environment ?? "Sandbox", signedTransactionInfo: signedTransaction,
                signedRenewalInfo: signedRenewal))
        payload.data?.consumptionRequestReason = consumptionRequestReason
        if let appTransaction {
            payload.data = nil
            payload.appData = .init(
                appAppleID: appAppleID, bundleID: appTransaction.bundleID, environment: appTransaction.receiptType,
                signedAppTransactionInfo: try authority.signer.sign(payload: appTransaction))
        } else if let summary {
            payload.data = nil
            payload.summary = summary
        } else if let externalPurchaseToken {
            payload.data = nil
            payload.externalPurchaseToken = externalPurchaseToken
        }
        let signed = try authority.signer.sign(payload: payload)
        keep(payload, signed: signed, originalTransactionID: transaction?.originalTransactionID ?? renewal?.originalTransactionID)
        return signed
    }

    /// Starts playing a subscription; returns its first transaction signed (what the app gets).
    /// With `notify`, its renewals and its end are notified as time passes, until the process ends.
    @discardableResult
    public func startSubscription(_ plan: SimulatedSubscription) throws -> String {
        guard plan.periodMs >= 100 else { throw SimulatorError("period_ms must be at least 100") }
        let start = plan.start ?? Int64(Date().timeIntervalSince1970 * 1000)
        let first = plan.transaction(period: 0, from: start)
        state.withLockedValue { state in
            state.subscriptions[plan.originalTransactionID] = (plan, start)
            state.subscriptionOf[first.transactionID] = plan.originalTransactionID
            state.transactions[first.transactionID] = first
        }
        if let notify = plan.notify {
            Task.detached { await self.notifyRenewals(of: plan, from: start, to: notify) }
        }
        return try authority.signer.sign(payload: first)
    }

    /// A known transaction (a played subscription's period once begun), signed as StoreKit 2 gives it.
    public func signedTransaction(_ transactionID: String) throws -> String? {
        materialize()
        return try state.withLockedValue { $0.transactions[transactionID] }.map { try authority.signer.sign(payload: $0) }
    }

    /// A played subscription as a receipt shows it: its periods begun so far and its renewal state.
    func receiptView(of originalTransactionID: String) -> (periods: [JWSTransaction], renewal: JWSRenewalInfo, status: Int)? {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        materialize(now: now)
        return state.withLockedValue { state in
            guard let (plan, start) = state.subscriptions[originalTransactionID] else { return nil }
            let count = plan.periods(at: now, from: start)
            let periods = (0..<count).compactMap { state.transactions[plan.transactionID(period: $0)] }
            let (status, renewal) = plan.state(at: now, from: start, periods: count)
            return (periods, renewal, status)
        }
    }

    /// The periods of played subscriptions begun by `now` become known transactions.
    func materialize(now: Int64 = Int64(Date().timeIntervalSince1970 * 1000)) {
        state.withLockedValue { state in
            for (plan, start) in state.subscriptions.values {
                for k in 0..<plan.periods(at: now, from: start) where state.transactions[plan.transactionID(period: k)] == nil {
                    let transaction = plan.transaction(period: k, from: start)
                    state.transactions[transaction.transactionID] = transaction
                    state.subscriptionOf[transaction.transactionID] = plan.originalTransactionID
                }
            }
        }
    }

    /// `GET /inApps/v1/subscriptions/{id}`: the subscription's status, its latest transaction and renewal info, signed.
    private func subscriptionStatuses(_ id: String, environment: String, app: String?) -> Response {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        materialize(now: now)
        let found: (plan: SimulatedSubscription, start: Int64)? = state.withLockedValue { state in
            state.subscriptionOf[id].flatMap { state.subscriptions[$0] }
        }
        guard let (plan, start) = found, plan.environment == environment, app == nil || plan.bundleID == app else { return Self.notFound }
        let periods = plan.periods(at: now, from: start)
        let (status, renewal) = plan.state(at: now, from: start, periods: periods)
        let lag = state.withLockedValue { state in
            defer { state.faults.laggingStatuses = 0 }
            return max(min(state.faults.laggingStatuses, periods - 1), 0)
        }
        var latest = plan.transaction(period: periods - 1 - lag, from: start)
        latest = state.withLockedValue { $0.transactions[latest.transactionID] } ?? latest
        guard let signedTransaction = try? authority.signer.sign(payload: latest),
              let signedRenewal = try? authority.signer.sign(payload: renewal)
        else { return Self.notFound }
        return (try? Self.json(.ok, [
            "environment": environment, "bundleId": plan.bundleID,
            "data": [[
                "subscriptionGroupIdentifier": "sim.\(plan.productID)",
                "lastTransactions": [[
                    "originalTransactionId": plan.originalTransactionID, "status": status,
                    "signedTransactionInfo": signedTransaction, "signedRenewalInfo": signedRenewal,
                ] as [String: any Sendable]],
            ] as [String: any Sendable]],
        ] as [String: any Sendable])) ?? Self.notFound
    }

    /// Sends DID_RENEW at each renewal, then EXPIRED or DID_FAIL_TO_RENEW, each lost, duplicated
    /// or delayed as `notify` says.
    private func notifyRenewals(of plan: SimulatedSubscription, from start: Int64, to notify: SimulatedSubscription.Notify) async {
        var k = 1
        while plan.renewals.map({ k <= $0 + 1 }) ?? true {
            let at = start + Int64(k) * plan.periodMs
            let wait = at - Int64(Date().timeIntervalSince1970 * 1000)
            if wait > 0 { try? await Task.sleep(for: .milliseconds(wait)) }
            if Task.isCancelled { return }
            materialize()
            let renewed = plan.renewals.map { k <= $0 } ?? true
            let (type, subtype): (String, String?) = renewed
                ? ("DID_RENEW", nil)
                : plan.ending == .expire ? ("EXPIRED", "VOLUNTARY") : ("DID_FAIL_TO_RENEW", plan.graceMs > 0 ? "GRACE_PERIOD" : nil)
            let transactionID = plan.transactionID(period: renewed ? k : k - 1)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let renewal = plan.state(at: max(now, at), from: start, periods: renewed ? k + 1 : k).renewal
            let uuid = UUID().uuidString.lowercased()
            if let signed = try? signedNotification(type: type, subtype: subtype, transactionID: transactionID, uuid: uuid, renewal: renewal) {
                if notify.url == nil {
                    send(uuid: uuid, lossRate: notify.lossRate)
                } else {
                    send(signed, uuid: uuid, to: notify)
                }
            }
            k += 1
        }
    }

    /// To `notify.url` directly, once or twice, late or lost, with no retry.
    private func send(_ signed: String, uuid: String, to notify: SimulatedSubscription.Notify) {
        guard let url = notify.url else { return }
        if Double.random(in: 0..<1) < notify.lossRate {
            recordAttempt(uuid, result: "NO_RESPONSE")
            return
        }
        let copies = Double.random(in: 0..<1) < notify.duplicateRate ? 2 : 1
        for _ in 0..<copies {
            let delay = notify.maxDelayMs > 0 ? Int64.random(in: 0...notify.maxDelayMs) : 0
            Task.detached {
                if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
                let status = try? await Self.deliver(signed, to: url)
                self.recordAttempt(uuid, result: Self.attemptResult(status))
            }
        }
    }

    /// Apple's `sendAttemptResult` for an HTTP status (`nil`: no answer).
    static func attemptResult(_ status: Int?) -> String {
        guard let status else { return "NO_RESPONSE" }
        return (200...206).contains(status) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
    }

    /// An app with its own Server API key: tokens whose `bid` names it must be signed with it.
    public func setAppKey(_ publicKey: P256.Signing.PublicKey, bundleID: String) {
        state.withLockedValue { $0.appKeys[bundleID] = publicKey }
    }

    /// Apps (bundle ids) not released yet: production answers their tokens 401, sandbox serves them.
    public func setUnreleased(_ bundleIDs: Set<String>) {
        state.withLockedValue { $0.unreleased = bundleIDs }
    }

    public func setFaults(_ faults: SimulatedAPIFaults) {
        state.withLockedValue { $0.faults = faults }
    }

    /// The most calls any `window` held, per "environment endpoint" (e.g. `Production transaction_info`).
    public func busiestWindow(_ window: Duration = .seconds(1)) -> [String: Int] {
        let windowMs = Int64(window / .milliseconds(1))
        return state.withLockedValue { state in
            state.calls.mapValues { times in
                var most = 0
                var start = 0
                for (end, time) in times.enumerated() {
                    while time - times[start] >= windowMs { start += 1 }
                    most = max(most, end - start + 1)
                }
                return most
            }
        }
    }

    /// Arrival times (UNIX ms) of the calls to one "environment endpoint", oldest first.
    public func callTimes(_ key: String) -> [Int64] {
        state.withLockedValue { $0.calls[key] ?? [] }
    }

    /// Every call that reached the API (after the token check), per "environment endpoint".
    public func callCounts() -> [String: Int] {
        state.withLockedValue { $0.calls.mapValues(\.count) }
    }

    func register(on router: Router<some RequestContext>) {
        for environment in ["Production", "Sandbox"] {
            registerReads(on: router, environment: environment)
            registerWrites(on: router, environment: environment)
            registerRetention(on: router, environment: environment)
        }
        registerRetentionControl(on: router)
        registerControl(on: router)
    }

    /// The Server API's reads in one environment (the sandbox's under `sandboxPrefix`).
    private func registerReads(on router: Router<some RequestContext>, environment: String) {
        let prefix = environment == "Sandbox" ? Self.sandboxPrefix : ""
        router.get(RouterPath(stringLiteral: prefix + "/inApps/v1/transactions/{id}")) { request, context in
            try self.answer(request, environment: environment, endpoint: "transaction_info") {
                self.transactionInfo(context.parameters.get("id") ?? "", environment: environment, app: Self.tokenBundle(request.headers[.authorization]))
            }
        }
        router.get(RouterPath(stringLiteral: prefix + "/inApps/v1/transactions/appTransactions/{id}")) { request, context in
            try self.answer(request, environment: environment, endpoint: "app_transaction_info") {
                self.appTransactionInfo(
                    context.parameters.get("id") ?? "", environment: environment, app: Self.tokenBundle(request.headers[.authorization]))
            }
        }
        router.get(RouterPath(stringLiteral: prefix + "/inApps/v1/lookup/{id}")) { request, context in
            try self.answer(request, environment: environment, endpoint: "order_lookup") {
                self.orderLookup(context.parameters.get("id") ?? "", environment: environment, app: Self.tokenBundle(request.headers[.authorization]))
            }
        }
        router.get(RouterPath(stringLiteral: prefix + "/inApps/v1/subscriptions/{id}")) { request, context in
            try self.answer(request, environment: environment, endpoint: "subscription_statuses") {
                self.subscriptionStatuses(context.parameters.get("id") ?? "", environment: environment, app: Self.tokenBundle(request.headers[.authorization]))
            }
        }
        router.get(RouterPath(stringLiteral: prefix + "/inApps/v2/history/{id}")) { request, context in
            try self.answer(request, environment: environment, endpoint: "transaction_history") {
                self.history(
                    context.parameters.get("id") ?? "", revision: request.uri.queryParameters.get("revision"), environment: environment,
                    app: Self.tokenBundle(request.headers[.authorization]))
            }
        }
        router.get(RouterPath(stringLiteral: prefix + "/inApps/v2/refund/lookup/{id}")) { request, context in
            let revision = request.uri.queryParameters.get("revision").map { String($0) }
            return try self.answer(request, environment: environment, endpoint: "refund_history") {
                self.refundHistory(
                    context.parameters.get("id") ?? "", revision: revision, environment: environment,
                    app: Self.tokenBundle(request.headers[.authorization]))
            }
        }
    }

    /// The Server API's writes and notification calls in one environment.
    private func registerWrites(on router: Router<some RequestContext>, environment: String) {
        let prefix = environment == "Sandbox" ? Self.sandboxPrefix : ""
        router.put(RouterPath(stringLiteral: prefix + "/inApps/v1/subscriptions/extend/{id}")) { request, context in
            let body = try await request.body.collect(upTo: 1 << 16)
            return try self.answer(request, environment: environment, endpoint: "extend_renewal_date") {
                self.extendRenewalDate(
                    context.parameters.get("id") ?? "", body: Data(buffer: body), environment: environment,
                    app: Self.tokenBundle(request.headers[.authorization]))
            }
        }
        router.post(RouterPath(stringLiteral: prefix + "/inApps/v1/subscriptions/extend/mass")) { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            return try self.answer(request, environment: environment, endpoint: "mass_extend_renewal_date") {
                self.extendRenewalDates(body: Data(buffer: body), environment: environment, app: Self.tokenBundle(request.headers[.authorization]))
            }
        }
        router.get(RouterPath(stringLiteral: prefix + "/inApps/v1/subscriptions/extend/mass/{product}/{request}")) { request, context in
            try self.answer(request, environment: environment, endpoint: "mass_extend_status") {
                self.massExtensionStatus(
                    product: context.parameters.get("product") ?? "", request: context.parameters.get("request") ?? "",
                    environment: environment)
            }
        }
        router.post(RouterPath(stringLiteral: prefix + "/inApps/v1/notifications/test")) { request, _ in
            try self.answer(request, environment: environment, endpoint: "test_notification") {
                self.requestTestNotification(environment: environment)
            }
        }
        router.get(RouterPath(stringLiteral: prefix + "/inApps/v1/notifications/test/{token}")) { request, context in
            try self.answer(request, environment: environment, endpoint: "test_notification_status") {
                self.testNotificationStatus(context.parameters.get("token") ?? "", environment: environment)
            }
        }
        router.post(RouterPath(stringLiteral: prefix + "/inApps/v1/notifications/history")) { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            let token = request.uri.queryParameters.get("paginationToken")
            return try self.answer(request, environment: environment, endpoint: "notification_history") {
                self.notificationHistory(body: Data(buffer: body), paginationToken: token, environment: environment)
            }
        }
        router.put(RouterPath(stringLiteral: prefix + "/inApps/v1/transactions/{id}/appAccountToken")) { request, context in
            let body = try await request.body.collect(upTo: 1 << 16)
            return try self.answer(request, environment: environment, endpoint: "app_account_token") {
                self.setAppAccountToken(
                    context.parameters.get("id") ?? "", body: Data(buffer: body), environment: environment,
                    app: Self.tokenBundle(request.headers[.authorization]))
            }
        }
        router.post(RouterPath(stringLiteral: prefix + "/inApps/v1/transactions/{id}/finish")) { request, context in
            try self.answer(request, environment: environment, endpoint: "finish_transaction") {
                self.finishTransaction(
                    context.parameters.get("id") ?? "", environment: environment, app: Self.tokenBundle(request.headers[.authorization]))
            }
        }
        router.put(RouterPath(stringLiteral: prefix + "/inApps/v2/transactions/consumption/{id}")) { request, context in
            let body = try await request.body.collect(upTo: 1 << 16)
            return try self.answer(request, environment: environment, endpoint: "consumption") {
                self.consumption(
                    context.parameters.get("id") ?? "", body: Data(buffer: body), environment: environment,
                    app: Self.tokenBundle(request.headers[.authorization]))
            }
        }
    }

    /// What tests and the drill use to play Apple's side (`/control/…`).
    private func registerControl(on router: Router<some RequestContext>) {
        router.post("/control/refunds") { request, context in
            // A refund Apple makes and never notifies: only Get Refund History tells.
            let order = try await request.decode(as: RefundOrder.self, context: context)
            guard let id = order.transactionID else { throw HTTPError(.badRequest, message: "transaction_id required") }
            guard (order.revocationPercentage ?? 100_000) > 0 else { throw HTTPError(.badRequest, message: "revocation_percentage must be above 0") }
            do {
                try self.refund(transactionID: id, percentage: order.revocationPercentage)
            } catch {
                throw HTTPError(.notFound, message: "\(error)")
            }
            return HTTPResponse.Status.noContent
        }
        router.post("/control/transactions") { request, context in
            let transaction = try await request.decode(as: JWSTransaction.self, context: context)
            let order = request.uri.queryParameters.get("order_id")
            return try Self.json(.ok, ["signedTransaction": try self.register(transaction, orderID: order)])
        }
        router.post("/control/players") { request, context in
            let player = try await request.decode(as: SimulatedPlayer.self, context: context)
            let made = try self.registerPlayer(player)
            return try Self.json(.ok, ["transaction_ids": made.map(\.transactionID)])
        }
        router.post("/control/subscriptions") { request, context in
            let plan = try await request.decode(as: SimulatedSubscription.self, context: context)
            do {
                return try Self.json(.ok, ["signedTransaction": try self.startSubscription(plan)])
            } catch let error as SimulatorError {
                throw HTTPError(.badRequest, message: error.message)
            }
        }
        router.post("/control/notifications") { request, context in
            try await self.sendNotification(try await request.decode(as: NotificationOrder.self, context: context))
        }
        router.post("/control/notification-retries") { request, context in
            let order = try await request.decode(as: RetryScheduleOrder.self, context: context)
            guard order.delaysMs.count <= 10, order.delaysMs.allSatisfy({ (0...86_400_000).contains($0) }) else {
                throw HTTPError(.badRequest, message: "delays_ms: at most 10 waits of 0...86400000 ms")
            }
            guard (100...60_000).contains(order.timeoutMs ?? 10_000) else { throw HTTPError(.badRequest, message: "timeout_ms: 100...60000") }
            self.setRetryDelays(order.delaysMs.map { .milliseconds($0) }, timeout: .milliseconds(order.timeoutMs ?? 10_000))
            return HTTPResponse.Status.noContent
        }
        router.post("/control/notification-url") { request, context in
            let order = try await request.decode(as: NotificationURLOrder.self, context: context)
            for environment in order.environment.map({ [$0] }) ?? ["Production", "Sandbox"] {
                self.setNotificationURL(order.url, environment: environment)
            }
            return HTTPResponse.Status.noContent
        }
        router.post("/control/unreleased") { request, context in
            self.setUnreleased(Set(try await request.decode(as: UnreleasedOrder.self, context: context).bundleIDs))
            return HTTPResponse.Status.noContent
        }
        router.post("/control/api-faults") { request, context in
            self.setFaults(try await request.decode(as: SimulatedAPIFaults.self, context: context))
            return HTTPResponse.Status.noContent
        }
        router.get("/control/sent-notifications") { _, _ in
            let sent = self.state.withLockedValue { state in state.sentOrder.compactMap { state.sent[$0] } }
            let list: [[String: any Sendable]] = sent.map {
                ["uuid": $0.uuid, "type": $0.type, "delivered": $0.delivered, "attempts": $0.attempts.count,
                 "original_transaction_id": $0.originalTransactionID ?? ""]
            }
            return try Self.json(.ok, ["notifications": list])
        }
        router.get("/control/api-calls") { _, _ in
            try Self.json(.ok, ["counts": self.callCounts(), "busiest_second": self.busiestWindow()])
        }
    }

    /// `POST /control/notifications`: a notification signed as Apple signs it, sent to `url`
    /// (`repeat` times, answering each status) or, without one, as Apple sends, with its retries.
    private func sendNotification(_ order: NotificationOrder) async throws -> Response {
        guard (1...100).contains(order.repeat ?? 1) else { throw HTTPError(.badRequest, message: "repeat must be within 1...100") }
        guard (1...100_000).contains(order.revocationPercentage ?? 100_000) else {
            throw HTTPError(.badRequest, message: "revocation_percentage must be within 1...100000 (milliunits)")
        }
        let signed: String
        let uuid = UUID().uuidString.lowercased()
        do {
            signed = try self.signedNotification(
                type: order.type, subtype: order.subtype, transactionID: order.transactionID, uuid: uuid,
                revocationPercentage: order.revocationPercentage)
        } catch let error as SimulatorError {
            throw HTTPError(.notFound, message: error.message)
        }
        // No URL: sent as Apple sends, to the environment's URL with its retries.
        guard let url = order.url else {
            for _ in 0..<(order.repeat ?? 1) { self.send(uuid: uuid) }
            return try Self.json(.ok, ["uuid": uuid, "statuses": [Int]()])
        }
        var statuses: [Int] = []
        for _ in 0..<(order.repeat ?? 1) {
            let status = try? await Self.deliver(signed, to: url)
            self.recordAttempt(uuid, result: Self.attemptResult(status))
            guard let status else { throw HTTPError(.badGateway, message: "\(url) did not answer") }
            statuses.append(status)
        }
        return try Self.json(.ok, ["uuid": uuid, "statuses": statuses])
    }

    func answer(
        _ request: Request, environment: String, endpoint: String, _ body: () -> Response
    ) throws -> Response {
        if let problem = checkToken(request.headers[.authorization]) {
            return try Self.json(.unauthorized, ["errorCode": 4_010_000, "errorMessage": problem] as [String: any Sendable])
        }
        if environment == "Production", let bundle = Self.tokenBundle(request.headers[.authorization]),
           state.withLockedValue({ $0.unreleased.contains(bundle) })
        {
            // Apple answers 401 with no body for an app production does not know.
            return Response(status: .unauthorized)
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let fault: Response? = try state.withLockedValue { state in
            state.calls["\(environment) \(endpoint)", default: []].append(now)
            if state.faults.rateLimited > 0 {
                state.faults.rateLimited -= 1
                var response = try Self.json(.tooManyRequests, ["errorCode": 4_290_000, "errorMessage": "Rate limit exceeded."])
                response.headers[.retryAfter] = String(now + Int64(state.faults.retryAfterMs))
                return response
            }
            if state.faults.serverErrors > 0 {
                state.faults.serverErrors -= 1
                return try Self.json(.internalServerError, ["errorCode": 5_000_001, "errorMessage": "An unknown error occurred."])
            }
            return nil
        }
        return fault ?? body()
    }

    private func transactionInfo(_ id: String, environment: String, app: String?) -> Response {
        materialize()
        guard let transaction = state.withLockedValue({ $0.transactions[id] }), transaction.environment == environment,
              Self.visible(transaction, to: app),
              let signed = try? authority.signer.sign(payload: transaction)
        else { return Self.notFound }
        return (try? Self.json(.ok, ["signedTransactionInfo": signed])) ?? Self.notFound
    }

    /// Look Up Order ID: status 0 and the order's transactions of this environment, signed; status
    /// 1 (HTTP 200) for an order id it does not know, as Apple answers an invalid one.
    private func orderLookup(_ orderID: String, environment: String, app: String?) -> Response {
        materialize()
        let found = state.withLockedValue { state in
            (state.orders[orderID] ?? []).compactMap { state.transactions[$0] }
                .filter { $0.environment == environment && Self.visible($0, to: app) }
        }
        let signed = found.compactMap { try? authority.signer.sign(payload: $0) }
        let body: [String: any Sendable] = signed.isEmpty ? ["status": 1] : ["status": 0, "signedTransactions": signed]
        return (try? Self.json(.ok, body)) ?? Self.notFound
    }

    /// `GET /inApps/v2/history/{id}?revision=`: the customer's transactions, oldest purchase first,
    /// 20 a page. `id` is any transaction id of theirs, or (API 1.20) their Apple Account's
    /// `appTransactionId`; the customer is everyone of that Apple Account, else the transaction's
    /// original transaction's. `revision` is where the next page starts: kept after the last
    /// page, it reads only purchases made since.
    private func history(_ id: String, revision: String?, environment: String, app: String?) -> Response {
        materialize()
        let found = state.withLockedValue { state -> (anchor: JWSTransaction, related: [JWSTransaction])? in
            state.historyRevisionsAsked.append(revision ?? "")
            return Self.customer(id, environment: environment, app: app, in: state.transactions)
        }
        guard let (anchor, unsorted) = found else { return Self.notFound }
        let related = unsorted.sorted { ($0.purchaseDate ?? 0, $0.transactionID) < ($1.purchaseDate ?? 0, $1.transactionID) }
        let start = revision.flatMap { $0.hasPrefix("hr:") ? Int($0.dropFirst(3)) : nil } ?? 0
        let page = Array(related.dropFirst(start).prefix(Self.refundPageSize))
        let next = start + page.count
        let signed = page.compactMap { try? authority.signer.sign(payload: $0) }
        return (try? Self.json(.ok, [
            "signedTransactions": signed, "revision": "hr:\(next)", "hasMore": next < related.count, "bundleId": anchor.bundleID,
            "environment": environment,
        ] as [String: any Sendable])) ?? Self.notFound
    }

    /// Apple refunds a transaction and the notification never comes (or came before anyone
    /// listened): only Get Refund History will tell.
    /// `percentage` (milliunits, below 100000): a partial refund, `REFUND_PRORATED`.
    public func refund(
        transactionID: String, reason: Int = 1, percentage: Int? = nil, at: Int64 = Int64(Date().timeIntervalSince1970 * 1000)
    ) throws {
        try state.withLockedValue { state in
            guard state.transactions[transactionID] != nil else { throw SimulatorError("apple-sim knows no transaction \(transactionID)") }
            state.transactions[transactionID]?.revocationDate = at
            state.transactions[transactionID]?.revocationReason = reason
            state.transactions[transactionID]?.revocationType = Self.refundType(percentage)
            state.transactions[transactionID]?.revocationPercentage = percentage
        }
    }

    /// Apple's `revocationType` of a refund: in part below 100000 milliunits, else in whole.
    static func refundType(_ percentage: Int?) -> String {
        guard let percentage, percentage < 100_000 else { return "REFUND_FULL" }
        return "REFUND_PRORATED"
    }

    /// The customer `id` names, as Apple's history endpoints read it: `id` is any transaction id of
    /// theirs, or their Apple Account's `appTransactionId`; the customer is everyone of that Apple
    /// Account, else the transaction's original transaction. Their transactions of `environment`
    /// visible to `app`, unsorted; only those are copied out (a bench holds tens of thousands).
    static func customer(
        _ id: String, environment: String, app: String?, in transactions: [String: JWSTransaction]
    ) -> (anchor: JWSTransaction, related: [JWSTransaction])? {
        let mine: (JWSTransaction) -> Bool = { $0.environment == environment && visible($0, to: app) }
        let byID = transactions[id].flatMap { mine($0) ? $0 : nil }
        guard let anchor = byID ?? transactions.values.first(where: { $0.appTransactionID == id && mine($0) }) else { return nil }
        let account = byID == nil ? id : anchor.appTransactionID
        let related = transactions.values.filter { other in
            guard mine(other) else { return false }
            if let account { return other.appTransactionID == account }
            return other.originalTransactionID == anchor.originalTransactionID
        }
        return (anchor, related)
    }

    /// How many refunds one page of Get Refund History holds (Apple: 20).
    static let refundPageSize = 20

    /// `GET /inApps/v2/refund/lookup/{id}?revision=`: the customer's refunded transactions, oldest
    /// refund first, 20 a page; the customer is everyone of the transaction's Apple Account (its
    /// `appTransactionId`), else its original transaction's. `revision` is where the next page starts.
    private func refundHistory(_ id: String, revision: String?, environment: String, app: String?) -> Response {
        materialize()
        guard let customer = state.withLockedValue({ Self.customer(id, environment: environment, app: app, in: $0.transactions) })
        else { return Self.notFound }
        let refunded = customer.related.filter { $0.revocationDate != nil }
            .sorted { ($0.revocationDate ?? 0, $0.transactionID) < ($1.revocationDate ?? 0, $1.transactionID) }
        let start = revision.flatMap { Int($0.dropFirst(3)) } ?? 0
        let page = Array(refunded.dropFirst(start).prefix(Self.refundPageSize))
        let next = start + page.count
        let signed = page.compactMap { try? authority.signer.sign(payload: $0) }
        return (try? Self.json(.ok, [
            "signedTransactions": signed, "revision": "rh:\(next)", "hasMore": next < refunded.count,
        ] as [String: any Sendable])) ?? Self.notFound
    }

    /// The consumption information accepted for a transaction, oldest first: each body's members
    /// as text (`customerConsented` `true`, `deliveryStatus`, `refundPreference`, …).
    public func consumptionReports(transactionID: String) -> [[String: String]] {
        state.withLockedValue { $0.consumption[transactionID] ?? [] }
    }

    /// `PUT /inApps/v2/transactions/consumption/{id}`: 202, or Apple's 400s for a body it would refuse.
    private func consumption(_ id: String, body: Data, environment: String, app: String?) -> Response {
        guard let transaction = state.withLockedValue({ $0.transactions[id] }), transaction.environment == environment,
              Self.visible(transaction, to: app)
        else {
            return Self.notFound
        }
        func refuse(_ code: Int, _ message: String) -> Response {
            (try? Self.json(.badRequest, ["errorCode": code, "errorMessage": message])) ?? Response(status: .badRequest)
        }
        guard let fields = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            return refuse(4_000_000, "The request body is not a JSON object.")
        }
        guard let consented = fields["customerConsented"] as? Bool, consented else {
            return refuse(4_000_035, "Invalid request. The customer consented field is invalid or doesn't indicate consent.")
        }
        let statuses: Set = ["DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"]
        guard let delivery = fields["deliveryStatus"] as? String, statuses.contains(delivery) else {
            return refuse(4_000_036, "Invalid request. The delivery status field is invalid.")
        }
        guard fields["sampleContentProvided"] is Bool else {
            return refuse(4_000_000, "Invalid request. sampleContentProvided is required.")
        }
        if let preference = fields["refundPreference"], !["DECLINE", "GRANT_FULL", "GRANT_PRORATED"].contains(preference as? String ?? "") {
            return refuse(4_000_000, "Invalid request. The refund preference field is invalid.")
        }
        // consumptionPercentage: milliunits, never for an auto-renewable subscription, 0 unless
        // delivered; GRANT_PRORATED of another product needs one above 0.
        let percentage = fields["consumptionPercentage"].map { ($0 as? NSNumber)?.intValue ?? -1 }
        if let percentage {
            guard (0...100_000).contains(percentage) else {
                return refuse(4_000_000, "Invalid request. The consumption percentage field is invalid.")
            }
            guard transaction.type != "Auto-Renewable Subscription" else {
                return refuse(4_000_000, "Invalid request. Don't include consumptionPercentage for an auto-renewable subscription.")
            }
            guard delivery == "DELIVERED" || percentage == 0 else {
                return refuse(4_000_000, "Invalid request. consumptionPercentage must be 0 unless deliveryStatus is DELIVERED.")
            }
        }
        if fields["refundPreference"] as? String == "GRANT_PRORATED", transaction.type != "Auto-Renewable Subscription",
           (percentage ?? 0) == 0
        {
            return refuse(4_000_000, "Invalid request. GRANT_PRORATED needs a consumptionPercentage greater than 0.")
        }
        // Foundation reads a JSON 0 as `false` too: only Apple's two flags are written as flags.
        let flags: Set = ["customerConsented", "sampleContentProvided"]
        var report: [String: String] = [:]
        for (name, value) in fields {
            if flags.contains(name), let flag = value as? Bool {
                report[name] = flag ? "true" : "false"
            } else if let number = value as? NSNumber {
                report[name] = number.stringValue
            } else {
                report[name] = "\(value)"
            }
        }
        state.withLockedValue { $0.consumption[id, default: []].append(report) }
        return Response(status: .accepted)
    }

    /// Posts `{"signedPayload": …}` to `url` as Apple does; returns the HTTP status.
    static func deliver(_ signedPayload: String, to url: String, timeout: Duration = .seconds(10)) async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload])))
        let response = try await HTTPClient.shared.execute(request, timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }

    /// `POST /control/unreleased`: `{"bundle_ids": [...]}`, apps production refuses (401).
    struct UnreleasedOrder: Decodable {
        var bundleIDs: [String]

        enum CodingKeys: String, CodingKey {
            case bundleIDs = "bundle_ids"
        }
    }

    /// `POST /control/notification-retries`: the waits before each retry, in ms (Apple's: 1, 12,
    /// 24, 48, 72 hours), and each attempt's deadline.
    struct RetryScheduleOrder: Decodable {
        var delaysMs: [Int64]
        /// Each attempt's deadline (default 10 s).
        var timeoutMs: Int64?

        enum CodingKeys: String, CodingKey {
            case delaysMs = "delays_ms"
            case timeoutMs = "timeout_ms"
        }
    }

    /// `POST /control/notifications`: which notification to sign and where to deliver it how often;
    /// without `url`, to the environment's notification URL with Apple's retries.
    struct NotificationOrder: Decodable {
        var url: String?
        var type: String
        var subtype: String?
        var transactionID: String?
        var `repeat`: Int?
        /// A `REFUND` in part: Apple's `revocationPercentage` (milliunits, below 100000).
        var revocationPercentage: Int?

        enum CodingKeys: String, CodingKey {
            case url, type, subtype
            case transactionID = "transaction_id"
            case `repeat`
            case revocationPercentage = "revocation_percentage"
        }
    }

    /// `POST /control/refunds`: a refund Apple makes and never notifies, in part with a percentage.
    struct RefundOrder: Decodable {
        var transactionID: String?
        var revocationPercentage: Int?

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id"
            case revocationPercentage = "revocation_percentage"
        }
    }

    /// What is wrong with the bearer token, or `nil` when it is one Apple would accept.
    func checkToken(_ authorization: String?) -> String? {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return "no bearer token" }
        let token = String(authorization.dropFirst("Bearer ".count))
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
              let signatureBytes = Base64URL.decode(parts[2]),
              let header = try? JSONDecoder().decode(CompactJWSSigner.Header.self, from: Data(headerBytes)),
              let claims = try? JSONDecoder().decode(TokenClaims.self, from: Data(claimBytes))
        else { return "not a JWT" }
        guard header.alg == "ES256", header.typ == "JWT", header.kid?.isEmpty == false else { return "header must be ES256, JWT, with kid" }
        let now = Int64(Date().timeIntervalSince1970)
        guard claims.aud == "appstoreconnect-v1", !claims.iss.isEmpty, !claims.bid.isEmpty else { return "wrong aud, iss or bid" }
        guard claims.iat <= now + 60, claims.exp > now, claims.exp - claims.iat <= 3600 else { return "expired or too long-lived" }
        if let publicKey = state.withLockedValue({ $0.appKeys[claims.bid] }) ?? publicKey {
            guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
                  publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
            else { return "signature does not match the key" }
        }
        return nil
    }

    /// The `bid` of a bearer token (checked already).
    static func tokenBundle(_ authorization: String?) -> String? {
        guard let token = authorization?.dropFirst("Bearer ".count) else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return nil }
        return (try? JSONDecoder().decode(TokenClaims.self, from: Data(bytes)))?.bid
    }

    struct TokenClaims: Decodable {
        var iss: String
        var iat: Int64
        var exp: Int64
        var aud: String
        var bid: String
    }

    /// Apple answers an app's token about that app's transactions only (the token's `bid`).
    static func visible(_ transaction: JWSTransaction, to app: String?) -> Bool {
        app == nil || transaction.bundleID == app
    }

    static var notFound: Response {
        (try? json(.notFound, ["errorCode": 4_040_010, "errorMessage": "Transaction id not found."]))
            ?? Response(status: .notFound)
    }

    static func json(_ status: HTTPResponse.Status, _ object: [String: any Sendable]) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Faults the simulated Server API serves before answering normally.
public struct SimulatedAPIFaults: Codable, Sendable, Equatable {
    /// The next this-many calls get 429 with `Retry-After` = now + `retryAfterMs` (UNIX ms).
    public var rateLimited: Int
    public var retryAfterMs: Int
    /// The next this-many calls get 500 with errorCode 5000001.
    public var serverErrors: Int
    /// The next Get All Subscription Statuses answer names the period this many renewals before
    /// the latest as the latest (Apple's statuses lagging its history).
    public var laggingStatuses: Int

    public init(rateLimited: Int = 0, retryAfterMs: Int = 1000, serverErrors: Int = 0, laggingStatuses: Int = 0) {
        self.rateLimited = rateLimited
        self.retryAfterMs = retryAfterMs
        self.serverErrors = serverErrors
        self.laggingStatuses = laggingStatuses
    }

    enum CodingKeys: String, CodingKey {
        case rateLimited = "rate_limited"
        case retryAfterMs = "retry_after_ms"
        case serverErrors = "server_errors"
        case laggingStatuses = "lagging_statuses"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rateLimited = try container.decodeIfPresent(Int.self, forKey: .rateLimited) ?? 0
        retryAfterMs = try container.decodeIfPresent(Int.self, forKey: .retryAfterMs) ?? 1000
        serverErrors = try container.decodeIfPresent(Int.self, forKey: .serverErrors) ?? 0
        laggingStatuses = try container.decodeIfPresent(Int.self, forKey: .laggingStatuses) ?? 0
    }
}

/// A request apple-sim cannot serve.
public struct SimulatorError: Error, Sendable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }
}
