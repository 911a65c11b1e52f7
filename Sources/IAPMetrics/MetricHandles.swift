import Metrics
import Synchronization

/// Metric handles (swift-metrics' `Counter`, `Timer`) kept once made, by their labels' values.
///
/// Why: swift-metrics goes to the factory each time a handle is created, and swift-prometheus then
/// takes its registry's lock, builds the series' name and labels and looks them up: about 4
/// thousand instructions a handle, and the intake made two a request, each stage two or more a
/// job (callgrind). Here a handle is made once per distinct set of label values, then found in a
/// dictionary. The sets are as bounded as the labels are (stages, scripts, routes, statuses,
/// products).
///
/// A handle made before `MetricsSystem.bootstrap` (swift-metrics' no-op factory still in place) is
/// not kept: it would stay a no-op after the bootstrap. A process bootstraps before it serves or
/// works, but a test process may run a stage before the test that bootstraps.
package final class MetricHandles<Key: Hashable & Sendable, Handle: AnyObject>: @unchecked Sendable {
    // @unchecked: `Handle` is swift-metrics' handle, a final class safe to share across threads
    // (it forwards to the factory's handler, which is `Sendable`); the dictionary is behind the mutex.
    private let made = Mutex<[Key: Handle]>([:])
    private let make: @Sendable (Key) -> Handle

    package init(_ make: @escaping @Sendable (Key) -> Handle) {
        self.make = make
    }

    package subscript(key: Key) -> Handle {
        made.withLock { made in
            if let handle = made[key] { return handle }
            let handle = make(key)
            guard !(MetricsSystem.factory is NOOPMetricsHandler) else { return handle }
            made[key] = handle
            return handle
        }
    }
}
