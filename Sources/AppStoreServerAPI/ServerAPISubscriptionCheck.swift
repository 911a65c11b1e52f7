import AppleJWS
import AppleReceipt
import Foundation

/// A re-check with Get All Subscription Statuses: finds the subscription among the customer's,
/// verifies its latest signed transaction and renewal info exactly as any signed data, and
/// answers them as a verified receipt of that one transaction with the subscription's state.
public struct ServerAPISubscriptionCheck: SignedServerAPIReading {
    public let api: SignedServerAPI

    public init(_ api: SignedServerAPI) { self.api = api }

    public func check(
        originalTransactionID: String, environment: String, knownLatest: String? = nil, knownExpiresAt: Int64? = nil,
        knownRevision: String? = nil, attempt: Int
    ) async -> VerificationOutcome {
        let environment = ServerAPIEnvironment(rawValue: environment) ?? .production
        let body: [UInt8]
        let answer = await client.subscriptionStatuses(originalTransactionID, environment: environment)
        switch answer {
        case .ok(let bytes): body = bytes
        case .notFound:
            return .rejected(
                reason: AppleReason.transactionNotFound,
                detail: "Apple knows no subscription \(originalTransactionID) in \(environment.rawValue)")
        default:
            return answer.failureOutcome!
        }
        guard let statuses = try? JSONDecoder().decode(StatusResponse.self, from: Data(body)) else {
            return .transient(reason: "apple_api_bad_response", detail: "not a subscription statuses answer", retryAfterMs: nil)
        }
        let items = statuses.data.flatMap(\.lastTransactions)
        guard let item = items.first(where: { $0.originalTransactionId == originalTransactionID }) ?? (items.count == 1 ? items.first : nil),
              let signedTransaction = item.signedTransactionInfo
        else {
            return .rejected(
                reason: AppleReason.transactionNotFound, detail: "Apple's statuses do not list subscription \(originalTransactionID)")
        }
        let transaction: JWSTransaction
        var renewal: JWSRenewalInfo?
        do {
            transaction = try await signedData.verify(signedTransaction, as: JWSTransaction.self)
            if let info = item.signedRenewalInfo { renewal = try await signedData.verify(info, as: JWSRenewalInfo.self) }
        } catch {
            return .rejected(reason: AppleReason.invalidSignature, detail: error.description)
        }
        guard transaction.originalTransactionID == originalTransactionID,
              renewal.map({ $0.originalTransactionID == originalTransactionID }) ?? true
        else {
            return .rejected(reason: AppleReason.invalidSignature, detail: "Apple's answer is about another subscription")
        }
        guard let status = SubscriptionRenewal.status(apple: item.status) else {
            return .transient(reason: "apple_api_bad_response", detail: "unknown subscription status \(item.status)", retryAfterMs: nil)
        }
        var receipt = VerifiedReceipt(signed: transaction)
        // The periods before the latest, from the customer's history: those begun since the latest
        // one we know, and the three before it (a period another source skipped, say a
        // notification of the next one that came first), so none is left ungranted; the ones
        // granted already are duplicates.
        var revision: String?
        if let knownLatest {
            let length = max((transaction.expiresDate ?? 0) - (transaction.purchaseDate ?? 0), 0)
            let since = (knownLatest == transaction.transactionID ? transaction.expiresDate : knownExpiresAt).map { $0 - 3 * length } ?? 0
            switch await periods(of: transaction, after: since, from: knownRevision, environment: environment) {
            case .success(let (earlier, next)):
                receipt.transactions = earlier.map(InAppTransaction.init(signed:)) + receipt.transactions
                revision = next
            case .failure(let failure): return failure.outcome
            }
        }
        receipt.renewal = SubscriptionRenewal(
            originalTransactionID: originalTransactionID, status: status, autoRenew: renewal?.autoRenewStatus,
            graceExpiresAt: renewal?.gracePeriodExpiresDate,
            signedAt: max(renewal?.signedDate ?? 0, transaction.signedDate ?? 0), expirationIntent: renewal?.expirationIntent)
        receipt.renewal?.eligibleWinBackOfferIDs = renewal?.eligibleWinBackOfferIDs
        receipt.renewal?.historyRevision = revision
        receipt.renewal?.renewalPlan = renewal?.renewalPlanFields
        return .valid(receipt)
    }

    /// The subscription's periods that end after `after` and before `latest`'s, verified, oldest
    /// first (Get Transaction History v2 of the customer, from `revision`: what changed since the
    /// last re-check read it; at most `maxHistoryPages` pages), and where the next read may start:
    /// where this one ended, unless it saw a period after `latest` (Apple's statuses lagging its
    /// history), which this answer does not grant: then where this one started, so the next
    /// re-check reads that period again.
    private func periods(
        of latest: JWSTransaction, after: Int64, from start: String?, environment: ServerAPIEnvironment
    ) async -> Result<([JWSTransaction], String?), Failure> {
        let history = ServerAPICustomerHistory(client: client, signedData: signedData)
        let listed: [JWSTransaction]
        let end: String?
        switch await history.transactions(
            of: latest.originalTransactionID, environment: environment, from: start, maxPages: Self.maxHistoryPages)
        {
        case .success(let page): (listed, end) = page
        case .failure(let failure): return .failure(failure)
        }
        var found: [JWSTransaction] = []
        var beyondLatest = false
        for transaction in listed {
            guard transaction.originalTransactionID == latest.originalTransactionID, transaction.transactionID != latest.transactionID,
                  let expires = transaction.expiresDate, expires > after
            else { continue }
            guard expires <= (latest.expiresDate ?? .max) else {
                beyondLatest = true
                continue
            }
            found.append(transaction)
        }
        return .success((found.sorted { ($0.expiresDate ?? 0) < ($1.expiresDate ?? 0) }, beyondLatest ? start : end))
    }

    static let maxHistoryPages = 10

    /// A verification outcome that ends the check early.
    struct Failure: Error {
        var outcome: VerificationOutcome
        init(_ outcome: VerificationOutcome) { self.outcome = outcome }
    }

    struct HistoryResponse: Decodable {
        var signedTransactions: [String]
        var revision: String?
        var hasMore: Bool
    }

    /// `StatusResponse`, the parts read.
    struct StatusResponse: Decodable {
        var data: [Group]

        struct Group: Decodable {
            var lastTransactions: [Item]
        }

        struct Item: Decodable {
            var originalTransactionId: String
            var status: Int
            var signedTransactionInfo: String?
            var signedRenewalInfo: String?
        }
    }
}
