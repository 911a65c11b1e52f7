import AppleJWS
import AppleReceipt
import Foundation

/// Look Up Order ID: the order id on a customer's email receipt from Apple, turned into the
/// purchases of that order, each `signedTransactions` member verified exactly as a client's
/// signed transaction is (one that does not verify refuses the whole answer).
public struct ServerAPIOrderLookup: SignedServerAPIReading {
    public let api: SignedServerAPI

    public init(_ api: SignedServerAPI) { self.api = api }

    public enum Result: Sendable {
        /// The order's purchases (one verified transaction each), as Apple signed them.
        case found([VerifiedReceipt])
        /// Apple's status 1: no order has this id.
        case notFound
        /// Apple could not be asked (`transient`: later may do), refused our key, or answered what
        /// cannot be trusted: the reason and detail.
        case failed(reason: String, detail: String, transient: Bool)
    }

    /// Apple's order ids are short runs of letters and digits (`MK5TZ8Q2R1`).
    public static func isWellFormed(_ orderID: String) -> Bool {
        (1...64).contains(orderID.utf8.count) && orderID.utf8.allSatisfy { $0 < 0x80 && (Character(UnicodeScalar($0)).isLetter || Character(UnicodeScalar($0)).isNumber) }
    }

    public func lookUp(orderID: String) async -> Result {
        switch await client.lookUpOrder(orderID) {
        case .ok(let body):
            guard let answer = try? JSONDecoder().decode(Body.self, from: Data(body)) else {
                return .failed(reason: "apple_api_bad_response", detail: "Look Up Order ID answered no status", transient: false)
            }
            guard answer.status == 0 else { return .notFound }
            var found: [VerifiedReceipt] = []
            for jws in answer.signedTransactions ?? [] {
                switch await signedData.outcome(of: jws) {
                case .valid(let receipt): found.append(receipt)
                case .rejected(_, let detail): return .failed(reason: AppleReason.invalidSignature, detail: detail ?? "", transient: false)
                default: return .failed(reason: AppleReason.invalidSignature, detail: "a signed transaction did not verify", transient: false)
                }
            }
            return .found(found)
        case .notFound:
            return .notFound
        case let failure:
            switch failure.failureOutcome {
            case .rejected(let reason, let detail)?: return .failed(reason: reason, detail: detail ?? "", transient: false)
            case .misconfigured(let reason, let detail)?: return .failed(reason: reason, detail: detail, transient: false)
            case .transient(let reason, let detail, _)?: return .failed(reason: reason, detail: detail, transient: true)
            default: return .failed(reason: "apple_api_failed", detail: "\(failure)", transient: false)
            }
        }
    }

    struct Body: Decodable {
        var status: Int
        var signedTransactions: [String]?
    }
}
