/// Everything the bench measured for one scenario (the table prints a part; `--json` all of it).
package struct ScenarioResult: Sendable, Codable {
    /// CPU and memory of one kind of process (all its processes together).
    package struct KindUsage: Sendable, Codable {
        package var processes: Int
        /// CPU seconds during the end-to-end run, and per 1,000 receipts of it (ms).
        package var cpuSeconds: Double
        package var cpuMsPer1000: Double
        /// The largest peak resident size of one process of this kind, in MB.
        package var peakRSSMB: Double
        /// After the traffic stopped: CPU % of the busiest process of this kind, and its RSS in MB.
        package var idleCPUPercent: Double
        package var idleRSSMB: Double
        /// The anonymous part of `idleRSSMB` (heap, stacks); the rest is shared, clean code pages.
        package var idleAnonymousMB: Double
    }

    package var scenario: BenchScenario
    /// Receipts/s from the first submit to the last grant, everything running at once.
    package var endToEndPerSecond: Double
    package var endToEndReceipts: Int
    /// 202s/s of the intake while no worker runs.
    package var intakePerSecond: Double
    /// Jobs/s of each stage working alone on a full queue.
    package var stagePerSecond: [String: Double]
    /// The verify stage's rate over `concurrency × verifiers / latency`.
    package var verifyShareOfBound: Double?
    /// Submit → granted while the bench pushes as fast as it can (mostly queueing).
    package var peakLatency: LatencySummary
    package var halfPeakPerSecond: Double
    /// Submit → granted at half of the end-to-end peak, and that minus Apple's latency.
    package var latency: LatencySummary
    package var pipelineAdded: LatencySummary
    package var commandsPerReceipt: Double
    package var roundTripsPerReceipt: Double
    /// Calls per receipt of each Redis command in the end-to-end run.
    package var commandsByName: [String: Double]
    package var redisCPUMsPer1000: Double
    package var processes: [String: KindUsage]
    package var ceiling: RedisCeiling
    /// Receipts/s × commands per receipt over the ceiling's ops/s.
    package var ceilingShare: Double
    /// Receipts/s when the verify queue is filled straight in Redis and the stages drain it (no intake).
    package var stagesOnlyPerSecond: Double
    /// The three stages' CPU (verifier + deduper + granter) per 1,000 receipts in that phase.
    package var stagesOnlyCPUMsPer1000: Double
    /// Redis round trips per receipt in that phase, the filling `submit_receipt` included.
    package var stagesOnlyRoundTripsPerReceipt: Double
    /// End to end at a fixed rate, the same on every run.
    package var lightLoad: LightLoad
    /// The intake's CPU per 1,000 receipts (ms) while it takes them alone (no worker running).
    package var intakeAloneCPUMsPer1000: Double
    /// A bare Hummingbird route's CPU per 1,000 of the same submissions (apple-sim's floor route):
    /// the least any Hummingbird intake costs.
    package var hummingbirdFloorCPUMsPer1000: Double

    package struct LightLoad: Sendable, Codable {
        package var perSecond: Double
        package var latency: LatencySummary
        package var pipelineAdded: LatencySummary
        /// Intake, stages and Redis together, per 1,000 receipts.
        package var pipelineCPUMsPer1000: Double
        package var roundTripsPerReceipt: Double
        /// The pipeline's own round trips a second with nothing to do (heartbeats, housekeeping,
        /// blocking takes timing out), measured just after: at a low rate they are a larger share
        /// of each receipt's round trips.
        package var idleRoundTripsPerSecond: Double
    }
}
