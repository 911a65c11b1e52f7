import Metrics
import NIOConcurrencyHelpers

/// Counters and timers made once per label and dimensions, then kept. `Counter(label:dimensions:)`
/// asks the metrics factory again at every call (swift-prometheus: its lock, the names' checks, a
/// lookup by name and labels): about 2 % of a granter's instructions for the few series each job
/// counts. The dimensions are bounded (stages, scripts, reasons, the catalog's products and
/// currencies), and so is what is kept. Until the process bootstraps its metrics nothing is kept:
/// a handle made before would count nowhere for good.
package enum MetricHandles {
    private struct Key: Hashable {
        var label: String
        var dimensions: [String]

        init(_ label: String, _ dimensions: [(String, String)]) {
            self.label = label
            self.dimensions = dimensions.flatMap { [$0.0, $0.1] }
        }
    }

    private static let counters = NIOLockedValueBox<[Key: Counter]>([:])
    private static let timers = NIOLockedValueBox<[Key: Timer]>([:])

    package static func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Counter {
        guard bootstrapped else { return Counter(label: label, dimensions: dimensions) }
        let key = Key(label, dimensions)
        if let kept = counters.withLockedValue({ $0[key] }) { return kept }
        let made = Counter(label: label, dimensions: dimensions)
        return counters.withLockedValue { kept in
            if let first = kept[key] { return first }
            kept[key] = made
            return made
        }
    }

    package static func timer(_ label: String, _ dimensions: [(String, String)] = []) -> Timer {
        guard bootstrapped else { return Timer(label: label, dimensions: dimensions) }
        let key = Key(label, dimensions)
        if let kept = timers.withLockedValue({ $0[key] }) { return kept }
        let made = Timer(label: label, dimensions: dimensions)
        return timers.withLockedValue { kept in
            if let first = kept[key] { return first }
            kept[key] = made
            return made
        }
    }

    private static var bootstrapped: Bool { !(MetricsSystem.factory is NOOPMetricsHandler) }
}
