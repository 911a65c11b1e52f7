import AppleReceipt
import ClusterHarness
import Foundation
import PipelineCore

/// The `jobs` scenario: what reading and writing a job's JSON costs, per stage's kind of job, on
/// one thread: every stage decodes the job it takes and encodes the one it forwards, so this is
/// paid three times a receipt. The jobs are shaped as the bench's receipts make them (one
/// consumable a receipt, Apple's answer with its sale fields). No processes, no Redis.
package struct JobCodecBench: Sendable {
    package var iterations = 20_000
    package var runs = 3

    package init() {}

    package func run() -> JobCodecBenchResult {
        var result = JobCodecBenchResult(iterations: iterations, runs: runs)
        for (kind, job) in Self.jobs() {
            let text = job.encoded()
            let read = median { for _ in 0..<iterations { precondition((try? Job.decode(text))?.ticket == job.ticket) } }
            let written = median { for _ in 0..<iterations { precondition(!job.encoded().isEmpty) } }
            result.kinds.append(.init(kind: kind, bytes: text.utf8.count, decodeMicroseconds: read, encodeMicroseconds: written))
        }
        return result
    }

    /// CPU µs of one iteration of `body`'s loop, the median of the runs.
    private func median(_ body: () -> Void) -> Double {
        let micros = (0..<runs).map { _ in
            let start = ProcessCPU.seconds()
            body()
            return (ProcessCPU.seconds() - start) * 1_000_000 / Double(iterations)
        }
        return micros.sorted()[micros.count / 2]
    }

    /// A verify job, the dedupe job verify forwards, the grant job dedupe forwards.
    static func jobs() -> [(String, Job)] {
        var transaction = InAppTransaction(
            transactionID: "2000000000001234", originalTransactionID: "2000000000001234", productID: "com.example.app.gold100",
            quantity: 1, purchaseDateMs: "1764300000000")
        transaction.appAccountToken = "5b1c0a0e-3c11-4c77-9f0a-1d2e3f405162"
        transaction.appTransactionID = "704289572311220010"
        transaction.signedDateMs = "1764300000123"
        transaction.inAppOwnershipType = "PURCHASED"
        transaction.currency = "USD"
        transaction.storefront = "USA"
        transaction.price = "990"
        let receipt = VerifiedReceipt(environment: "Sandbox", bundleID: "com.example.app", transactions: [transaction])
        let receiptData = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) }).base64EncodedString()
        let verify = Job(
            ticket: "k3Jx9QbT2mWc8LpZ4vYa0n", userID: "player-0042", receiptData: receiptData, productID: nil, transactionID: nil,
            enqueuedAt: 1_764_300_000_456)
        var dedupe = verify
        dedupe.stage = .dedupe
        dedupe.work = .dedupe(Job.Verified(receipt: receipt))
        var purchase = Purchase(
            transactionID: transaction.transactionID, originalTransactionID: transaction.originalTransactionID,
            productID: transaction.productID, quantity: 1, unit: transaction.originalTransactionID, outcome: .pending)
        purchase.currency = "USD"
        purchase.consumable = true
        var grant = dedupe
        grant.stage = .grant
        grant.work = .grant(Job.Claimed(purchases: [purchase], receipt: receipt, sharing: .bind))
        return [("verify", verify), ("dedupe", dedupe), ("grant", grant)]
    }
}

/// What the `jobs` scenario measured (`--json` gives every field).
package struct JobCodecBenchResult: Sendable, Codable {
    package struct Kind: Sendable, Codable {
        package var kind: String
        package var bytes: Int
        package var decodeMicroseconds: Double
        package var encodeMicroseconds: Double

        enum CodingKeys: String, CodingKey {
            case kind, bytes
            case decodeMicroseconds = "decode_us"
            case encodeMicroseconds = "encode_us"
        }
    }

    package var iterations: Int
    package var runs: Int
    package var kinds: [Kind] = []

    package var summary: String {
        kinds.map { String(format: "%@ %.2f µs read, %.2f µs written", $0.kind, $0.decodeMicroseconds, $0.encodeMicroseconds) }
            .joined(separator: "; ")
    }

    package var table: String {
        TextTable.render(
            header: ["job (jobs scenario)", "bytes", "decode us", "encode us"],
            rows: kinds.map { [$0.kind, "\($0.bytes)", String(format: "%.2f", $0.decodeMicroseconds), String(format: "%.2f", $0.encodeMicroseconds)] })
    }
}
