/// The body of a verifyReceipt call. Absent optionals are left out of the JSON.
struct VerifyReceiptRequest: Encodable {
    var receiptData: String
    var password: String?
    var excludeOldTransactions: Bool?

    enum CodingKeys: String, CodingKey {
        case receiptData = "receipt-data"
        case password
        case excludeOldTransactions = "exclude-old-transactions"
    }
}
