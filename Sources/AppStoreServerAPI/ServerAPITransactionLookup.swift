import AppleJWS
import AppleReceipt
import Foundation

/// Looks a transaction id up (production first, then sandbox on 4040010, or on a 401: production
/// refuses the key of an app it never released, while App Review and launch day buy in sandbox)
/// and verifies the `signedTransactionInfo` Apple returns exactly as a client's signed
/// transaction is verified. A sandbox purchase is then subject to `IAP_SANDBOX` like any other.
public struct ServerAPITransactionLookup: SignedServerAPIReading {
    public let api: SignedServerAPI

    public init(_ api: SignedServerAPI) { self.api = api }

    public func lookUp(transactionID: String, attempt: Int) async -> VerificationOutcome {
        // Production's 401, kept when sandbox has nothing either: we could not ask production.
        var refusedInProduction: ServerAPIAnswer?
        for environment in ServerAPIEnvironment.allCases {
            let answer = await client.transactionInfo(transactionID, environment: environment)
            switch answer {
            case .ok(let body):
                guard let answer = try? JSONDecoder().decode(TransactionInfoBody.self, from: Data(body)) else {
                    return .transient(reason: "apple_api_bad_response", detail: "no signedTransactionInfo", retryAfterMs: nil)
                }
                let outcome = await signedData.outcome(of: answer.signedTransactionInfo)
                if case .valid(let receipt) = outcome, receipt.transactions.first?.transactionID != transactionID {
                    return .rejected(reason: AppleReason.invalidSignature, detail: "Apple's answer is about another transaction")
                }
                return outcome
            case .notFound:
                continue
            case .unauthorized where environment == .production:
                refusedInProduction = answer
                continue
            default:
                return answer.failureOutcome!
            }
        }
        if let refusedInProduction { return refusedInProduction.failureOutcome! }
        return .rejected(reason: AppleReason.transactionNotFound, detail: "Apple knows no transaction \(transactionID) in production or sandbox")
    }

    struct TransactionInfoBody: Decodable {
        var signedTransactionInfo: String
    }
}
