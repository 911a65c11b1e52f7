/// The parts of Apple's verifyReceipt answer that the pipeline reads.
public struct VerifyReceiptResponse: Sendable, Equatable {
    public var status: Int
    public var environment: String?
    public var isRetryable: Bool
    public var receipt: Receipt?
    public var latestReceiptInfo: [InAppTransaction]

    public struct Receipt: Sendable, Equatable {
        public var bundleID: String?
        public var inApp: [InAppTransaction]
    }

    /// Every purchase in the answer, `in_app` first, each transaction once.
    public var transactions: [InAppTransaction] {
        var seen = Set<String>()
        return ((receipt?.inApp ?? []) + latestReceiptInfo).filter { seen.insert($0.transactionID).inserted }
    }
}
