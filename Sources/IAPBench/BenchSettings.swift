import Foundation

/// Everything one bench run needs; `workers/bench --help` documents each.
public struct BenchSettings: Sendable {
    public var scenarios = BenchScenario.matrix + BenchScenario.scaling
    /// Receipts the intake takes alone (the stages then drain them one at a time).
    public var intakeReceipts = 3000
    /// Upper bound of the end-to-end run; it is sized to about `endToEndSeconds` at the rate the
    /// slowest stage showed alone.
    public var endToEndReceipts = 6000
    public var endToEndSeconds = 5.0
    /// Length of the run at half of the measured peak, where latency is read.
    public var halfPeakSeconds = 4.0
    /// The fixed rate of the light-load phase (receipts/s), as long as the half-peak run.
    public var lightRate = 500
    public var idleSeconds = 3.0
    /// Open HTTP requests of the load client at once.
    public var clientConcurrency = 64
    /// Requests per `redis-benchmark` test (LPUSH, RPOP).
    public var ceilingRequests = 200_000
    /// The intake checks signatures (`IAP_CLIENT_KEYS_FILE`) and the load client signs.
    public var signRequests = false
    public var binDirectory: URL
    public var workDirectory: URL

    public init(binDirectory: URL, workDirectory: URL) {
        self.binDirectory = binDirectory
        self.workDirectory = workDirectory
    }
}
