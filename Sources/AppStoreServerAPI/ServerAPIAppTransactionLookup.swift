import AppleJWS
import AppleReceipt
import Foundation

/// Get App Transaction Info: the Apple Account (`appTransactionId`) a transaction was bought on,
/// for purchases whose evidence does not say (a legacy receipt, a transaction signed before iOS
/// 18.4). Apple's signed answer is verified like any signed data and must be of the client's app.
public struct ServerAPIAppTransactionLookup: SignedServerAPIReading {
    public let api: SignedServerAPI

    public init(_ api: SignedServerAPI) { self.api = api }

    /// How a look-up ended.
    public enum Answer: Sendable, Equatable {
        /// The customer's `appTransactionId`.
        case found(String)
        /// Apple has none for it (unknown, or from before Apple kept them), or its answer was not
        /// usable: the purchase goes on without (`detail` says why).
        case none(detail: String)
        /// Try again later (Apple's 5xx or 429, the fleet's budget spent).
        case transient(reason: String, detail: String, retryAfterMs: Int?)
    }

    public func appTransactionID(for transactionID: String, environment: String) async -> Answer {
        let environment = ServerAPIEnvironment(rawValue: environment) ?? .production
        let answer = await client.appTransactionInfo(transactionID, environment: environment)
        switch answer {
        case .ok(let body):
            guard let decoded = try? JSONDecoder().decode(Body.self, from: Data(body)) else {
                return .none(detail: "Apple's answer has no signedAppTransactionInfo")
            }
            let app: JWSAppTransaction
            do {
                app = try await signedData.verify(decoded.signedAppTransactionInfo, as: JWSAppTransaction.self)
            } catch {
                return .none(detail: "Apple's app transaction does not verify: \(error)")
            }
            guard app.bundleID == client.configuration.bundleID else {
                return .none(detail: "Apple's app transaction is of \(app.bundleID.prefix(128)), not \(client.configuration.bundleID)")
            }
            guard let id = app.appTransactionID, (1...128).contains(id.utf8.count) else {
                return .none(detail: "Apple's app transaction names no appTransactionId")
            }
            return .found(id)
        case .transient(let reason, let detail, let retryAfterMs):
            return .transient(reason: reason, detail: detail, retryAfterMs: retryAfterMs)
        case .notFound:
            return .none(detail: "Apple knows no app transaction for \(transactionID)")
        case .refused(let code, let detail):
            return .none(detail: "Apple refused (\(code)): \(detail)")
        case .unauthorized(let status, let detail):
            return .none(detail: "the App Store Server API refused our token (\(status)): \(detail)")
        case .misconfigured(let detail):
            return .none(detail: detail)
        }
    }

    struct Body: Decodable {
        var signedAppTransactionInfo: String
    }
}
