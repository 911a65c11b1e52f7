/// What a client got from the App Store, one of the four kinds `POST /v1/receipts` takes.
public enum Evidence: Sendable, Equatable {
    /// A legacy app receipt, base64 (`Bundle.main.appStoreReceiptURL`'s contents).
    case receipt(String)
    /// StoreKit 2's `Transaction.jwsRepresentation`.
    case signedTransaction(String)
    /// A transaction id alone: the pipeline asks the App Store Server API.
    case transactionID(String)
    /// StoreKit's `AppTransaction.shared` `jwsRepresentation`: binds the user to their Apple
    /// Account and grants nothing.
    case signedAppTransaction(String)

    var member: (name: String, value: String) {
        switch self {
        case .receipt(let data): ("receipt_data", data)
        case .signedTransaction(let jws): ("signed_transaction", jws)
        case .transactionID(let id): ("transaction_id", id)
        case .signedAppTransaction(let jws): ("signed_app_transaction", jws)
        }
    }
}
