import AppleJWS
import AppleReceipt
import Foundation

/// Get Transaction History v2 read whole for one customer: every transaction Apple has of the
/// customer that `id` names (any transaction id of theirs, or since API 1.20 their Apple
/// Account's `appTransactionId`), every product type, finished or not, each verified exactly as a
/// client's signed transaction, oldest first, answered as one verified receipt; with the
/// `revision` to read from next time, so a later read asks only for what changed.
public struct ServerAPICustomerHistory: SignedServerAPIReading {
    public let api: SignedServerAPI

    public init(_ api: SignedServerAPI) { self.api = api }

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
        let found: [JWSTransaction]
        let next: String?
        switch await transactions(of: id, environment: environment, from: revision, maxPages: maxPages) {
        case .success(let page): (found, next) = page
        case .failure(let failure): return Read(outcome: failure.outcome, revision: nil)
        }
        guard let first = found.first else { return Read(outcome: Self.nothing(id, environment), revision: next) }
        guard found.allSatisfy({ $0.bundleID == first.bundleID }) else {
            return Read(outcome: .rejected(reason: AppleReason.invalidSignature, detail: "Apple's history mixes apps"), revision: nil)
        }
        var receipt = VerifiedReceipt(signed: first)
        receipt.environment = environment.rawValue
        receipt.transactions = found.sorted { ($0.purchaseDate ?? 0) < ($1.purchaseDate ?? 0) }.map(InAppTransaction.init(signed:))
        return Read(outcome: .valid(receipt), revision: next)
    }

    /// The pages themselves: every transaction listed from `revision` on (at most `maxPages`
    /// pages), each verified, in Apple's order, and where the read ended (a 404 ends it with what
    /// was read). What a sync and a re-check both read.
    func transactions(
        of id: String, environment: ServerAPIEnvironment, from revision: String?, maxPages: Int
    ) async -> Result<(transactions: [JWSTransaction], revision: String?), ServerAPISubscriptionCheck.Failure> {
        var found: [JWSTransaction] = []
        var revision = revision
        for _ in 0..<maxPages {
            let answer = await client.transactionHistory(id, revision: revision, environment: environment)
            let body: [UInt8]
            switch answer {
            case .ok(let bytes): body = bytes
            case .notFound: return .success((found, revision))
            default: return .failure(.init(answer.failureOutcome!))
            }
            guard let page = try? JSONDecoder().decode(ServerAPISubscriptionCheck.HistoryResponse.self, from: Data(body)) else {
                return .failure(.init(.transient(reason: "apple_api_bad_response", detail: "not a history answer", retryAfterMs: nil)))
            }
            for signed in page.signedTransactions {
                do {
                    found.append(try await signedData.verify(signed, as: JWSTransaction.self))
                } catch {
                    return .failure(.init(.rejected(reason: AppleReason.invalidSignature, detail: error.description)))
                }
            }
            revision = page.revision ?? revision
            guard page.hasMore else { break }
        }
        return .success((found, revision))
    }

    public static let maxPages = 50

    static func nothing(_ id: String, _ environment: ServerAPIEnvironment) -> VerificationOutcome {
        .rejected(reason: AppleReason.transactionNotFound, detail: "Apple has no transaction of \(id.prefix(128)) in \(environment.rawValue)")
    }
}
