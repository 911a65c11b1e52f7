/// A verifyReceipt request body as the simulator reads it. A password that is not a string
/// counts as a wrong one (21004), as at Apple; a missing or non-string receipt is 21000.
struct SimulatedRequest: Decodable {
    var receiptData: String
    var password: String?

    enum CodingKeys: String, CodingKey {
        case receiptData = "receipt-data"
        case password
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        receiptData = try container.decode(String.self, forKey: .receiptData)
        password = try? container.decodeIfPresent(String.self, forKey: .password)
    }
}
