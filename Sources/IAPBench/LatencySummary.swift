/// Percentiles of a set of latencies, in milliseconds.
package struct LatencySummary: Sendable, Codable, Equatable {
    package var count: Int
    package var p50: Double
    package var p95: Double
    package var p99: Double
    package var max: Double

    package init(_ samples: [Double]) {
        let sorted = samples.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            // Nearest rank: the smallest sample with at least p of them at or below it.
            let rank = Int((p * Double(sorted.count)).rounded(.up))
            return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
        }
        count = sorted.count
        p50 = percentile(0.50)
        p95 = percentile(0.95)
        p99 = percentile(0.99)
        max = sorted.last ?? 0
    }

    /// The same percentiles with `offset` taken off each (never below zero).
    package func minus(_ offset: Double) -> LatencySummary {
        var copy = self
        copy.p50 = Swift.max(0, p50 - offset)
        copy.p95 = Swift.max(0, p95 - offset)
        copy.p99 = Swift.max(0, p99 - offset)
        copy.max = Swift.max(0, max - offset)
        return copy
    }
}
