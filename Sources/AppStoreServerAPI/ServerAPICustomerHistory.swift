import AppleJWS
import AppleReceipt
import Foundation

/// Get Transaction History v2 read whole for one customer: every transaction Apple has of the
/// customer that `id` names (any transaction id of theirs, or since API 1.20 their Apple
/// Account's `appTransactionId`), every product type, finished or not, each verified exactly as a
/// client's signed transaction, oldest first, answered as one verified receipt; with the
/// `revision` to read from next time, so a later read asks only for what changed.
public struct ServerAPICustomerHistory: Sendable {
    public let client: ServerAPIClient
    public let signedData: SignedDataVerifier

    public init(client: ServerAPIClient, signedData: SignedDataVerifier) {
        self.client = client
        self.signedData = signedData
    }

    /// What one read found: the outcome (`.valid` with every transaction; `.rejected`
    /// `transaction_not_found` when Apple has nothing since `revision`), and where the next read
    /// starts (`nil` unless Apple answered).
    public struct Read: Sendable {
        public var outcome: VerificationOutcome
        public var revision: String?
    }

    /// At most `maxPages` pages of 20 are read in one go; the rest wait for the next read (from
    /// the revision returned).
    public func read(_ id: String, environment: String, from revision: String?, maxPages: Int = Self.maxPages) async -> Read {
        let environment = ServerAPIEnvironment(rawValue: environment) ?? .production
        var found: [JWSTransaction] = []
        var revision = revision
        for _ in 0..<maxPages {
            let answer = await client.transactionHistory(id, revision: revision, environment: environment)
            let body: [UInt8]
            switch answer {
            case .ok(let bytes): body = bytes
            case .notFound: return Read(outcome: Self.nothing(id, environment), revision: revision)
            default: return Read(outcome: answer.failureOutcome!, revision: nil)
            }
            guard let page = try? JSONDecoder().decode(ServerAPISubscriptionCheck.HistoryResponse.self, from: Data(body)) else {
                return Read(outcome: .transient(reason: "apple_api_bad_response", detail: "not a history answer", retryAfterMs: nil), revision: nil)
            }
            for signed in page.signedTransactions {
                do {
                    found.append(try await signedData.verify(signed, as: JWSTransaction.self))
                } catch {
                    return Read(outcome: .rejected(reason: AppleReason.invalidSignature, detail: error.description), revision: nil)
                }
            }
            revision = page.revision ?? revision
            guard page.hasMore else { break }
        }
        guard let first = found.first else { return Read(outcome: Self.nothing(id, environment), revision: revision) }
        guard found.allSatisfy({ $0.bundleID == first.bundleID }) else {
            return Read(outcome: .rejected(reason: AppleReason.invalidSignature, detail: "Apple's history mixes apps"), revision: nil)
        }
        var receipt = VerifiedReceipt(signed: first)
        receipt.environment = environment == .sandbox ? "Sandbox" : "Production"
        receipt.transactions = found.sorted { ($0.purchaseDate ?? 0) < ($1.purchaseDate ?? 0) }.map(InAppTransaction.init(signed:))
        return Read(outcome: .valid(receipt), revision: revision)
    }

    public static let maxPages = 50

    static func nothing(_ id: String, _ environment: ServerAPIEnvironment) -> VerificationOutcome {
        .rejected(reason: AppleReason.transactionNotFound, detail: "Apple has no transaction of \(id.prefix(128)) in \(environment.rawValue)")
    }
}
