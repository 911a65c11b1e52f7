import ClusterHarness

/// One configuration the bench measures.
package struct BenchScenario: Sendable, Codable, Equatable {
    package var name: String
    package var appleLatencyMs: Int
    package var verifiers: Int
    /// `IAP_CONCURRENCY` of every worker: jobs one process handles at once.
    package var concurrency: Int
    package var durability: Durability

    /// The most the verifiers can do if Apple's latency is all that holds them back.
    var verifyBound: Double? {
        appleLatencyMs > 0 ? Double(verifiers * concurrency) * 1000 / Double(appleLatencyMs) : nil
    }

    /// Apple latency 0 and 50 ms × 1 and 2 verifiers × Redis without persistence and with
    /// `appendfsync always`, at the default concurrency.
    package static let matrix: [BenchScenario] = [0, 50].flatMap { latency in
        [1, 2].flatMap { verifiers in
            [Durability.none, .always].map { durability in
                BenchScenario(
                    name: "lat\(latency)-v\(verifiers)-\(durability == .none ? "nopersist" : "fsync")",
                    appleLatencyMs: latency, verifiers: verifiers, concurrency: 64, durability: durability)
            }
        }
    }

    /// 1, 2, 4 and 8 verifiers with 8 jobs each at 50 ms: linear until CPU or Redis gives out; then
    /// one verifier with 256 slots at 50 ms, as many requests open as the Go peer's goroutines.
    package static let scaling: [BenchScenario] = [1, 2, 4, 8].map { verifiers in
        BenchScenario(name: "scale-v\(verifiers)-c8", appleLatencyMs: 50, verifiers: verifiers, concurrency: 8, durability: .always)
    } + [BenchScenario(name: "lat50-v1-c256-nopersist", appleLatencyMs: 50, verifiers: 1, concurrency: 256, durability: .none)]
}
