import AppleJWS
import AppStoreServerAPI
import Foundation
import IAPStages
import Logging
import PipelineCore

/// The `history` scenario: what a sync (`POST /v1/users/{id}/sync`) costs on Apple's side, the
/// part that is new (dedupe and grant cost what a receipt of as many purchases costs). apple-sim
/// in this process holds `customers` Apple Accounts with `purchases` purchases each; each account's
/// history is read whole through the real client (Get Transaction History by `appTransactionId`,
/// 20 a page, every transaction's ES256 signature and chain verified), then read again from the
/// revision it ended at (a later login with nothing new). Reports Apple calls per sync and the
/// read's time per sync (median, p99).
package struct HistoryBench: Sendable {
    package var customers: Int
    package var purchaseCounts: [Int]

    package init(customers: Int = 200, purchaseCounts: [Int] = [1, 20, 100]) {
        self.customers = customers
        self.purchaseCounts = purchaseCounts
    }

    package func run(workDirectory: URL, progress: @Sendable (String) -> Void) async throws -> HistoryBenchResult {
        let apple = try await InProcessApple.start(in: workDirectory, name: "history")
        defer { Task { await apple.stop() } }
        let store = PipelineStore(redis: apple.scratch.client, keys: apple.configuration.keys)
        guard let client = try apple.configuration.serverAPIClient(store: store, logger: apple.logger) else {
            throw BenchError("the history bench needs the Server API key")
        }
        defer { Task { await client.shutdown() } }
        let reader = ServerAPICustomerHistory(
            client: client, signedData: SignedDataVerifier(rootCertificates: try apple.configuration.rootCertificates()))
        var rows: [HistoryBenchResult.Row] = []
        for (round, count) in purchaseCounts.enumerated() {
            let accounts = try register(apple, round: round, purchases: count)
            let calls = apple.simulator.serverAPI.callCounts()["Production transaction_history"] ?? 0
            var first: [Double] = []
            var again: [Double] = []
            for account in accounts {
                let started = ContinuousClock.now
                let read = await reader.read(account, environment: "Production", from: nil)
                first.append((ContinuousClock.now - started) / .milliseconds(1))
                guard case .valid(let receipt) = read.outcome, receipt.transactions.count == count else {
                    throw BenchError("the history of \(account) did not read whole: \(read.outcome)")
                }
                let restarted = ContinuousClock.now
                let rest = await reader.read(account, environment: "Production", from: read.revision)
                again.append((ContinuousClock.now - restarted) / .milliseconds(1))
                guard case .rejected = rest.outcome else { throw BenchError("a read from the revision found more: \(rest.outcome)") }
            }
            let made = (apple.simulator.serverAPI.callCounts()["Production transaction_history"] ?? 0) - calls
            let row = HistoryBenchResult.Row(
                purchases: count, callsPerSync: Double(made) / Double(accounts.count) - 1, firstRead: LatencySummary(first),
                rereadFromRevision: LatencySummary(again))
            progress("history: \(row.summary)")
            rows.append(row)
        }
        return HistoryBenchResult(customers: customers, rows: rows)
    }

    /// `customers` Apple Accounts with `purchases` consumables each.
    private func register(_ apple: InProcessApple, round: Int, purchases: Int) throws -> [String] {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return try (0..<customers).map { customer in
            let account = String(706_000_000_000_000 + round * 1_000_000 + customer)
            for index in 0..<purchases {
                let id = String(7_000_000_000_000_000 + round * 100_000_000 + customer * 1000 + index)
                var transaction = JWSTransaction(
                    transactionID: id, bundleID: InProcessApple.bundleID, productID: "gold.100", purchaseDate: now - Int64(purchases - index),
                    type: "Consumable", environment: "Production")
                transaction.appTransactionID = account
                _ = try apple.simulator.serverAPI.register(transaction)
            }
            return account
        }
    }
}

package struct HistoryBenchResult: Codable, Sendable {
    package var customers: Int
    package var rows: [Row]

    package struct Row: Codable, Sendable {
        package var purchases: Int
        /// Get Transaction History calls of the first read of one account (the read again costs one more).
        package var callsPerSync: Double
        package var firstRead: LatencySummary
        /// The same account again from the revision kept: nothing new.
        package var rereadFromRevision: LatencySummary

        var summary: String {
            String(
                format: "%d purchases: %.0f Apple calls, read and verified in %.1f ms (p99 %.1f); again from the revision %.1f ms (1 call)",
                purchases, callsPerSync, firstRead.p50, firstRead.p99, rereadFromRevision.p50)
        }
    }
}
