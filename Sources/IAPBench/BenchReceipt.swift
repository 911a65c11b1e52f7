import ClusterHarness

/// A new consumable purchase of its own user: every bench receipt is verified once and granted.
struct BenchReceipt: SubmittableReceipt {
    let userID: String
    let receiptData: String

    init(run: String, index: Int) {
        let id = "\(run)-\(index)"
        userID = "player-\(id)"
        receiptData = LocalCluster.consumableReceipt(id: id)
    }

    static func batch(_ run: String, _ count: Int) -> [BenchReceipt] {
        (0..<count).map { BenchReceipt(run: run, index: $0) }
    }
}
