import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// A stage worker's `/metrics` (`IAP_METRICS_PORT`): the Prometheus text format of its registry,
/// on its own port (the intake serves `/metrics` on its HTTP port).
package struct MetricsServer: Service {
    let registry: PrometheusCollectorRegistry
    let host: String
    let port: Int
    let logger: Logger

    package init(registry: PrometheusCollectorRegistry, host: String, port: Int, logger: Logger) {
        self.registry = registry
        self.host = host
        self.port = port
        self.logger = logger
    }

    package func run() async throws {
        let router = Router()
        let registry = self.registry
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        let application = Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "iap-metrics"), logger: logger)
        // `run()`, not `runService()`: the worker's ServiceGroup owns the signals and stops this
        // server in its turn. `runService()` starts a group of its own that also catches SIGTERM,
        // ends first, and made the worker's group report "finished unexpectedly" (exit 1).
        try await application.run()
    }
}
