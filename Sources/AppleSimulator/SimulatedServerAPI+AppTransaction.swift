import AppleJWS
import Foundation
import Hummingbird

extension SimulatedServerAPI {
    /// `GET /inApps/v1/transactions/appTransactions/{transactionId}`: the app transaction of the
    /// Apple Account a registered transaction names (`appTransactionId`), signed; 404 4040019
    /// (AppTransactionDoesNotExistError) when it names none, 4040010 when the transaction is unknown.
    func appTransactionInfo(_ id: String, environment: String, app: String?) -> Response {
        materialize()
        guard let transaction = state.withLockedValue({ $0.transactions[id] }), transaction.environment == environment,
              Self.visible(transaction, to: app)
        else { return Self.notFound }
        guard let account = transaction.appTransactionID else {
            return (try? Self.json(.notFound, ["errorCode": 4_040_019, "errorMessage": "No app transaction exists for the customer."]))
                ?? Response(status: .notFound)
        }
        let appTransaction = JWSAppTransaction(
            appTransactionID: account, bundleID: transaction.bundleID, receiptType: environment,
            receiptCreationDate: Int64(Date().timeIntervalSince1970 * 1000))
        guard let signed = try? authority.signer.sign(payload: appTransaction) else { return Self.notFound }
        return (try? Self.json(.ok, ["signedAppTransactionInfo": signed])) ?? Self.notFound
    }
}
