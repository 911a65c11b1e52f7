import IAPOperations
import PipelineCore

/// Support's look-up at Apple (it spends the fleet's Server API budget, so only on request and
/// only for support and above): an order id from the player's email receipt, or a transaction
/// id, each purchase Apple signs shown as the books hold it, with a grant form for any nobody was
/// granted.
extension ConsolePages {
    enum LookupKind: String, Sendable, CaseIterable {
        case order, transaction
    }

    /// Who may ask Apple and grant: support and above.
    static let supportRole = ConsoleRole.support

    func lookup(_ kind: LookupKind, id: String, with support: SupportLookup, role: ConsoleRole) async -> (values: [String: Any], failed: SupportLookup.Failure?) {
        let result = kind == .order ? await support.order(id) : await support.transaction(id)
        let command = "iapctl lookup \(kind.rawValue) \(ConsolePaths.shellQuoted(id))"
        switch result {
        case .failure(let failure):
            return (["title": "Look-up at Apple", "error": failure.message, "code": failure.code, "iapctl": command], failure)
        case .success(let answer):
            let rows: [[String: Any]] = answer.purchases.map { books in
                Self.present([
                    "transaction": books.transaction.transactionID, "original": books.transaction.originalTransactionID,
                    "product": books.transaction.productID, "environment": books.environment, "state": books.state,
                    "storyHref": books.unit != nil && !["unknown", "unclaimed"].contains(books.state)
                        ? ConsolePaths.purchase(books.unit ?? "") : nil,
                    "grantable": books.isGrantable && role >= Self.supportRole ? true : nil,
                ])
            }
            return (Self.present([
                "title": kind == .order ? "Order \(id) at Apple" : "Transaction \(id) at Apple", "purchases": rows,
                "hasPurchases": !rows.isEmpty, "orderID": answer.orderID, "grantAction": ConsolePaths.lookupGrant,
                "iapctl": command + (rows.contains { $0["grantable"] != nil } ? " --grant-to USER" : ""),
            ]), nil)
        }
    }
}
