/// The parts of Apple's verifyReceipt answer that the pipeline reads.
public struct VerifyReceiptResponse: Decodable, Sendable, Equatable {
    public var status: Int
    public var environment: String?
    public var isRetryable: Bool
    public var receipt: Receipt?
    public var latestReceiptInfo: [InAppTransaction]

    public struct Receipt: Decodable, Sendable, Equatable {
        public var bundleID: String?
        public var inApp: [InAppTransaction]

        enum CodingKeys: String, CodingKey {
            case bundleID = "bundle_id"
            case inApp = "in_app"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            bundleID = try container.decodeLenientStringIfPresent(.bundleID)
            inApp = try container.decodeIfPresent([InAppTransaction].self, forKey: .inApp) ?? []
        }
    }

    enum CodingKeys: String, CodingKey {
        case status
        case environment
        case isRetryable = "is-retryable"
        case receipt
        case latestReceiptInfo = "latest_receipt_info"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let status = try container.decodeLenientStringIfPresent(.status).flatMap({ Int($0) }) else {
            throw DecodingError.keyNotFound(CodingKeys.status, .init(codingPath: [], debugDescription: "no status"))
        }
        self.status = status
        environment = try container.decodeLenientStringIfPresent(.environment)
        isRetryable = try container.decodeLenientStringIfPresent(.isRetryable).map { $0 == "1" || $0 == "true" } ?? false
        // Only a valid answer's receipt matters; a malformed one elsewhere must not hide the status.
        receipt = status == 0 ? try container.decodeIfPresent(Receipt.self, forKey: .receipt) : nil
        latestReceiptInfo =
            status == 0 ? try container.decodeIfPresent([InAppTransaction].self, forKey: .latestReceiptInfo) ?? [] : []
    }

    /// Every purchase in the answer, `in_app` first, each transaction once.
    public var transactions: [InAppTransaction] {
        var seen = Set<String>()
        return ((receipt?.inApp ?? []) + latestReceiptInfo).filter { seen.insert($0.transactionID).inserted }
    }
}
