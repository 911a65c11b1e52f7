import AppleJWS
import Foundation
import Hummingbird

extension SimulatedServerAPI {
    /// A transaction as apple-sim knows it now (a played subscription's periods included).
    public func transaction(_ id: String) -> JWSTransaction? {
        materialize()
        return state.withLockedValue { $0.transactions[id] }
    }

    /// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`: 200 with no body,
    /// and every transaction of the purchase (a subscription's later periods too) carries the
    /// token from then on; Apple's refusals: 4000183 (the body's token is not a UUID), 4040010
    /// (no such transaction here), 4000187 (not an original transaction id), 4000185 (family shared).
    func setAppAccountToken(_ id: String, body: Data, environment: String, app: String?) -> Response {
        func refuse(_ code: Int, _ message: String) -> Response {
            (try? Self.json(.badRequest, ["errorCode": code, "errorMessage": message])) ?? Response(status: .badRequest)
        }
        let fields = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        guard let text = fields?["appAccountToken"] as? String, let token = UUID(uuidString: text) else {
            return refuse(4_000_183, "Invalid request. The app account token field must be a valid UUID.")
        }
        materialize()
        return state.withLockedValue { state in
            guard let transaction = state.transactions[id], transaction.environment == environment, Self.visible(transaction, to: app) else {
                return Self.notFound
            }
            guard transaction.originalTransactionID == id else {
                return refuse(4_000_187, "Invalid request. The transaction ID provided is not an original transaction ID.")
            }
            guard transaction.inAppOwnershipType != "FAMILY_SHARED" else {
                return refuse(4_000_185, "Invalid request. Family Sharing transactions aren't supported by this endpoint.")
            }
            let lowered = token.uuidString.lowercased()
            for (key, value) in state.transactions where value.originalTransactionID == id && value.environment == environment {
                state.transactions[key]?.appAccountToken = lowered
            }
            state.subscriptions[id]?.plan.appAccountToken = lowered
            state.tokensSet[id, default: []].append(lowered)
            return Response(status: .ok)
        }
    }

    /// `POST /inApps/v1/transactions/{transactionId}/finish`: 200 with no body; 4040010 when no
    /// such transaction is here.
    func finishTransaction(_ id: String, environment: String, app: String?) -> Response {
        materialize()
        return state.withLockedValue { state in
            guard let transaction = state.transactions[id], transaction.environment == environment, Self.visible(transaction, to: app) else {
                return Self.notFound
            }
            state.finished[id, default: 0] += 1
            return Response(status: .ok)
        }
    }

    /// The `revision` each Get Transaction History call was asked from ("" for none), in order.
    public func historyRevisionsAsked() -> [String] {
        state.withLockedValue { $0.historyRevisionsAsked }
    }

    /// How many times Finish Transaction finished a transaction.
    public func timesFinished(transactionID: String) -> Int {
        state.withLockedValue { $0.finished[transactionID] ?? 0 }
    }

    /// The tokens Set App Account Token set on an original transaction, oldest first.
    public func appAccountTokensSet(originalTransactionID: String) -> [String] {
        state.withLockedValue { $0.tokensSet[originalTransactionID] ?? [] }
    }
}
