import AppleJWS
import Foundation
import Hummingbird

extension SimulatedServerAPI {
    static let day: Int64 = 86_400_000

    /// A request's body as Apple reads it: its refusals (4000009 days, 4000010 reason, 4000011
    /// request identifier) or the three members.
    private func extensionRequest(_ body: Data) -> Result<(days: Int, reason: Int, request: String, fields: [String: Any]), Refusal> {
        guard let fields = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            return .failure(Refusal(4_000_000, "The request body is not a JSON object."))
        }
        guard let days = (fields["extendByDays"] as? NSNumber)?.intValue, (1...90).contains(days) else {
            return .failure(Refusal(4_000_009, "Invalid extend by days value."))
        }
        guard let reason = (fields["extendReasonCode"] as? NSNumber)?.intValue, (0...3).contains(reason) else {
            return .failure(Refusal(4_000_010, "Invalid extend reason code."))
        }
        guard let request = fields["requestIdentifier"] as? String, (1...128).contains(request.utf8.count) else {
            return .failure(Refusal(4_000_011, "Invalid request identifier."))
        }
        return .success((days, reason, request, fields))
    }

    struct Refusal: Error {
        var code: Int
        var message: String
        var status: HTTPResponse.Status = .badRequest
        init(_ code: Int, _ message: String, status: HTTPResponse.Status = .badRequest) {
            self.code = code
            self.message = message
            self.status = status
        }
        var response: Response {
            (try? SimulatedServerAPI.json(status, ["errorCode": code, "errorMessage": message])) ?? Response(status: status)
        }
    }

    /// The subscription's latest transaction in `environment` (the one with the latest expiry).
    private func latest(of original: String, environment: String, app: String?) -> JWSTransaction? {
        state.withLockedValue { state in
            state.transactions.values
                .filter {
                    $0.originalTransactionID == original && $0.environment == environment && $0.type == "Auto-Renewable Subscription"
                        && Self.visible($0, to: app)
                }
                .max { ($0.expiresDate ?? 0) < ($1.expiresDate ?? 0) }
        }
    }

    /// Extends `transaction` by `days` for `request` unless Apple would refuse: expired (4030004),
    /// or twice in the last 365 days already (4030005). The same request again changes nothing.
    private func extend(_ transaction: JWSTransaction, days: Int, request: String, now: Int64) -> Result<JWSTransaction, Refusal> {
        let original = transaction.originalTransactionID
        return state.withLockedValue { state in
            let done = state.extensions[original] ?? []
            if done.contains(where: { $0.request == request }) { return .success(state.transactions[transaction.transactionID] ?? transaction) }
            guard let expires = transaction.expiresDate, expires > now else {
                return .failure(Refusal(4_030_004, "The subscription doesn't qualify for a renewal date extension.", status: .forbidden))
            }
            guard done.filter({ $0.at > now - 365 * Self.day }).count < 2 else {
                return .failure(Refusal(
                    4_030_005, "The subscription already received the maximum number of renewal date extensions.", status: .forbidden))
            }
            var extended = transaction
            extended.expiresDate = expires + Int64(days) * Self.day
            extended.signedDate = now
            state.transactions[transaction.transactionID] = extended
            state.extensions[original, default: []].append((request, now, days))
            return .success(extended)
        }
    }

    /// Signs RENEWAL_EXTENDED for the extended transaction, keeps it and sends it to the app's URL (if set).
    private func announceExtension(_ transaction: JWSTransaction) {
        if let signed = try? signedNotification(type: "RENEWAL_EXTENDED", transactionID: transaction.transactionID),
           let uuid = uuid(of: signed)
        {
            send(uuid: uuid)
        }
    }

    /// The UUID of a notification this simulator signed.
    func uuid(of signed: String) -> String? {
        state.withLockedValue { state in state.sent.values.first { $0.signedPayload == signed }?.uuid }
    }

    /// A kept notification's `signedPayload`, as Apple would POST it.
    public func signedPayload(uuid: String) -> String? {
        state.withLockedValue { $0.sent[uuid]?.signedPayload }
    }

    /// How many renewal-date extensions a subscription received.
    public func extensionCount(originalTransactionID: String) -> Int {
        state.withLockedValue { $0.extensions[originalTransactionID]?.count ?? 0 }
    }

    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`: `{effectiveDate,
    /// originalTransactionId, webOrderLineItemId, success}`, then RENEWAL_EXTENDED.
    func extendRenewalDate(_ original: String, body: Data, environment: String, app: String?) -> Response {
        let request: (days: Int, reason: Int, request: String, fields: [String: Any])
        switch extensionRequest(body) {
        case .success(let read): request = read
        case .failure(let refusal): return refusal.response
        }
        materialize()
        guard let transaction = latest(of: original, environment: environment, app: app) else {
            return Refusal(4_040_005, "Original transaction id not found.", status: .notFound).response
        }
        switch extend(transaction, days: request.days, request: request.request, now: Int64(Date().timeIntervalSince1970 * 1000)) {
        case .failure(let refusal):
            return refusal.response
        case .success(let extended):
            announceExtension(extended)
            return (try? Self.json(.ok, [
                "effectiveDate": extended.expiresDate ?? 0, "originalTransactionId": original,
                "webOrderLineItemId": extended.webOrderLineItemID ?? "", "success": true,
            ] as [String: any Sendable])) ?? Self.notFound
        }
    }

    /// `POST /inApps/v1/subscriptions/extend/mass`: every active subscription of `productId` (in
    /// the storefronts named) extended at once, each told RENEWAL_EXTENDED, then RENEWAL_EXTENSION
    /// SUMMARY; answers `{requestIdentifier}`.
    func extendRenewalDates(body: Data, environment: String, app: String?) -> Response {
        let request: (days: Int, reason: Int, request: String, fields: [String: Any])
        switch extensionRequest(body) {
        case .success(let read): request = read
        case .failure(let refusal): return refusal.response
        }
        guard let product = request.fields["productId"] as? String, !product.isEmpty else {
            return Refusal(4_000_023, "Invalid product id.").response
        }
        let storefronts = request.fields["storefrontCountryCodes"] as? [String]
        if let storefronts, storefronts.contains(where: { $0.count != 3 || $0.uppercased() != $0 }) {
            return Refusal(4_000_027, "Invalid storefront country code.").response
        }
        materialize()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let originals = state.withLockedValue { state in
            Set(state.transactions.values.filter { $0.productID == product && $0.environment == environment && Self.visible($0, to: app) }
                .map(\.originalTransactionID))
        }
        var succeeded = 0
        var failed = 0
        for original in originals.sorted() {
            guard let latest = latest(of: original, environment: environment, app: app), (latest.expiresDate ?? 0) > now else { continue }
            if let storefronts, let storefront = latest.storefront, !storefronts.contains(storefront) { continue }
            switch extend(latest, days: request.days, request: request.request, now: now) {
            case .success(let extended):
                succeeded += 1
                announceExtension(extended)
            case .failure:
                failed += 1
            }
        }
        let status: [String: any Sendable] = [
            "requestIdentifier": request.request, "complete": true, "completeDate": now, "succeededCount": succeeded, "failedCount": failed,
        ]
        state.withLockedValue { $0.massExtensions["\(environment) \(product) \(request.request)"] = status }
        let summary = NotificationPayload.Summary(
            requestIdentifier: request.request, environment: environment, bundleID: app ?? "com.example.game", productID: product)
        if let signed = try? signedNotification(type: "RENEWAL_EXTENSION", subtype: "SUMMARY", transactionID: nil, summary: summary),
           let uuid = uuid(of: signed)
        {
            send(uuid: uuid)
        }
        return (try? Self.json(.ok, ["requestIdentifier": request.request])) ?? Self.notFound
    }

    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
    func massExtensionStatus(product: String, request: String, environment: String) -> Response {
        guard let status = state.withLockedValue({ $0.massExtensions["\(environment) \(product) \(request)"] }) else {
            return Refusal(4_040_009, "Invalid request identifier or product id.", status: .notFound).response
        }
        return (try? Self.json(.ok, status)) ?? Self.notFound
    }
}
