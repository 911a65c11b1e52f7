import AppleSimulator
import ClusterHarness

/// A new consumable purchase of its own user: every bench receipt is verified once and granted.
struct BenchReceipt: SubmittableReceipt {
    let userID: String
    let receiptData: String

    init(run: String, index: Int) {
        let id = "\(run)-\(index)"
        let gold = SimulatedReceipt.Transaction(transactionID: "tx-\(id)", productID: "drill.gold")
        userID = "player-\(id)"
        receiptData = SimulatedReceipt(bundleID: LocalCluster.bundleID, transactions: [gold], nonce: id).receiptData()
    }

    static func batch(_ run: String, _ count: Int) -> [BenchReceipt] {
        (0..<count).map { BenchReceipt(run: run, index: $0) }
    }
}
