import PlainJSON

/// The body of a verifyReceipt call. Absent optionals are left out of the JSON.
struct VerifyReceiptRequest {
    var receiptData: String
    var password: String?
    var excludeOldTransactions: Bool?

    var json: JSONValue {
        .members([
            "receipt-data": .string(receiptData),
            "password": password.json,
            "exclude-old-transactions": excludeOldTransactions.map(JSONValue.bool),
        ])
    }

    /// The JSON bytes sent to Apple.
    var body: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(receiptData.utf8.count + 128)
        json.write(into: &bytes)
        return bytes
    }
}
