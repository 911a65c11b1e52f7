/// Everything the bench measured for one scenario (the table prints a part; `--json` all of it).
public struct ScenarioResult: Sendable, Codable {
    /// CPU and memory of one kind of process (all its processes together).
    public struct KindUsage: Sendable, Codable {
        public var processes: Int
        /// CPU seconds during the end-to-end run, and per 1,000 receipts of it (ms).
        public var cpuSeconds: Double
        public var cpuMsPer1000: Double
        /// The largest peak resident size of one process of this kind, in MB.
        public var peakRSSMB: Double
        /// After the traffic stopped: CPU % of the busiest process of this kind, and its RSS in MB.
        public var idleCPUPercent: Double
        public var idleRSSMB: Double
        /// The anonymous part of `idleRSSMB` (heap, stacks); the rest is shared, clean code pages.
        public var idleAnonymousMB: Double
    }

    public var scenario: BenchScenario
    /// Receipts/s from the first submit to the last grant, everything running at once.
    public var endToEndPerSecond: Double
    public var endToEndReceipts: Int
    /// 202s/s of the intake while no worker runs.
    public var intakePerSecond: Double
    /// Jobs/s of each stage working alone on a full queue.
    public var stagePerSecond: [String: Double]
    /// The verify stage's rate over `concurrency × verifiers / latency`.
    public var verifyShareOfBound: Double?
    /// Submit → granted while the bench pushes as fast as it can (mostly queueing).
    public var peakLatency: LatencySummary
    public var halfPeakPerSecond: Double
    /// Submit → granted at half of the end-to-end peak, and that minus Apple's latency.
    public var latency: LatencySummary
    public var pipelineAdded: LatencySummary
    public var commandsPerReceipt: Double
    public var roundTripsPerReceipt: Double
    /// Calls per receipt of each Redis command in the end-to-end run.
    public var commandsByName: [String: Double]
    public var redisCPUMsPer1000: Double
    public var processes: [String: KindUsage]
    public var ceiling: RedisCeiling
    /// Receipts/s × commands per receipt over the ceiling's ops/s.
    public var ceilingShare: Double
    /// Receipts/s when the verify queue is filled straight in Redis and the stages drain it (no intake).
    public var stagesOnlyPerSecond: Double
    /// The three stages' CPU (verifier + deduper + granter) per 1,000 receipts in that phase.
    public var stagesOnlyCPUMsPer1000: Double
    /// Redis round trips per receipt in that phase, the filling `submit_receipt` included.
    public var stagesOnlyRoundTripsPerReceipt: Double
    /// End to end at a fixed rate, the same on every run.
    public var lightLoad: LightLoad

    public struct LightLoad: Sendable, Codable {
        public var perSecond: Double
        public var latency: LatencySummary
        public var pipelineAdded: LatencySummary
        /// Intake, stages and Redis together, per 1,000 receipts.
        public var pipelineCPUMsPer1000: Double
        public var roundTripsPerReceipt: Double
        /// The pipeline's own round trips a second with nothing to do (heartbeats, housekeeping,
        /// blocking takes timing out), measured just after: at a low rate they are a larger share
        /// of each receipt's round trips.
        public var idleRoundTripsPerSecond: Double
    }
}
