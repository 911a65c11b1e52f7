import Foundation

/// Everything one bench run needs; `workers/bench --help` documents each.
package struct BenchSettings: Sendable {
    package var scenarios = BenchScenario.matrix + BenchScenario.scaling
    /// Receipts the intake takes alone (the stages then drain them one at a time).
    package var intakeReceipts = 3000
    /// Upper bound of the end-to-end run; it is sized to about `endToEndSeconds` at the rate the
    /// slowest stage showed alone.
    package var endToEndReceipts = 6000
    package var endToEndSeconds = 5.0
    /// Length of the run at half of the measured peak, where latency is read.
    package var halfPeakSeconds = 4.0
    /// The fixed rate of the light-load phase (receipts/s), as long as the half-peak run.
    package var lightRate = 500
    package var idleSeconds = 3.0
    /// Open HTTP requests of the load client at once.
    package var clientConcurrency = 64
    /// Requests per `redis-benchmark` test (LPUSH, RPOP).
    package var ceilingRequests = 200_000
    /// The intake checks signatures (`IAP_CLIENT_KEYS_FILE`) and the load client signs.
    package var signRequests = false
    package var binDirectory: URL
    package var workDirectory: URL

    package init(binDirectory: URL, workDirectory: URL) {
        self.binDirectory = binDirectory
        self.workDirectory = workDirectory
    }
}
