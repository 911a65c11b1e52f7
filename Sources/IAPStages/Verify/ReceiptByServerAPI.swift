import AppleReceipt
import AppStoreServerAPI
import Foundation
import PipelineCore

/// A legacy receipt verified without verifyReceipt (`IAP_RECEIPT_MODE=server_api`): its
/// transaction ids are read out of the PKCS#7 container (`AppReceiptReader`, no signature
/// checked), then Apple's history of that customer is read (Get Transaction History, production
/// first, sandbox when production has none) and verified like any signed data. The answer is
/// what Apple signed of the receipt's purchases (their original transactions: a subscription's
/// later periods too), with prices, offers and `appTransactionId`; no shared secret is needed.
package struct ReceiptByServerAPI: Sendable {
    /// Each app's history reader: the receipt's app's reads (the one its client named, else the
    /// one the receipt says).
    package let readers: EachApp<ServerAPICustomerHistory>

    package init(readers: EachApp<ServerAPICustomerHistory>) {
        self.readers = readers
    }

    package func verify(receiptData: String, bundleID: String?) async -> VerificationOutcome {
        guard let bytes = Data(base64Encoded: receiptData, options: .ignoreUnknownCharacters), !bytes.isEmpty else {
            return .rejected(reason: AppleReason.invalidReceipt, detail: "receipt_data is not base64")
        }
        let contents: AppReceiptReader.Contents
        do {
            contents = try AppReceiptReader.read(Array(bytes))
        } catch {
            return .rejected(reason: AppleReason.invalidReceipt, detail: error.description)
        }
        guard !contents.purchases.isEmpty else {
            return .rejected(reason: ReasonCode.noPurchases, detail: "the receipt lists no in-app purchase")
        }
        let history = readers.of(bundleID ?? contents.bundleID)
        // One history read covers the customer; a purchase it does not list (another Apple
        // Account's, on a shared device) is read by its own id, up to `maxReads` reads in all.
        var receipt: VerifiedReceipt?
        var found: [InAppTransaction] = []
        for purchase in contents.purchases.prefix(Self.maxReads)
        where !found.contains(where: { Self.covers($0, purchase) }) {
            let outcome = await Self.read(purchase.transactionID, from: history)
            switch outcome {
            case .valid(let answer):
                if receipt == nil { receipt = answer }
                found += answer.transactions.filter { transaction in contents.purchases.contains { Self.covers(transaction, $0) } }
            case .rejected(let reason, _) where reason == AppleReason.transactionNotFound:
                continue
            default:
                return outcome
            }
        }
        guard var receipt, !found.isEmpty else {
            return .rejected(reason: AppleReason.transactionNotFound, detail: "Apple's history lists none of the receipt's purchases")
        }
        var seen: Set<String> = []
        receipt.transactions = found.filter { seen.insert($0.transactionID).inserted }
        return .valid(receipt)
    }

    /// How many history reads one receipt may cost.
    static let maxReads = 5

    /// Apple's transaction is the receipt's purchase, or a later period of its subscription.
    static func covers(_ transaction: InAppTransaction, _ purchase: AppReceiptReader.Purchase) -> Bool {
        transaction.transactionID == purchase.transactionID || transaction.originalTransactionID == purchase.originalTransactionID
    }

    /// The customer's history by one of their transaction ids: production first, sandbox when
    /// production has none.
    private static func read(_ transactionID: String, from history: some CustomerHistoryReading) async -> VerificationOutcome {
        let production = await history.read(transactionID, environment: "Production", from: nil)
        if case .rejected(let reason, _) = production.outcome, reason == AppleReason.transactionNotFound {
            return await history.read(transactionID, environment: "Sandbox", from: nil).outcome
        }
        return production.outcome
    }
}
