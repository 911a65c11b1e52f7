import Metrics
import NIOConcurrencyHelpers
import Prometheus

/// The process's Prometheus registry: swift-metrics is bootstrapped with it once per process, so
/// every counter, gauge and timer the pipeline records lands in it.
package func bootstrapMetrics() -> PrometheusCollectorRegistry {
    metricsRegistry.withLockedValue { registry in
        if let registry { return registry }
        let created = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: created))
        registry = created
        return created
    }
}

private let metricsRegistry = NIOLockedValueBox<PrometheusCollectorRegistry?>(nil)

/// The process's metrics in the Prometheus text format.
@Sendable package func metricsText() -> [UInt8] {
    bootstrapMetrics().emitToBuffer()
}
