import PipelineCore

extension WorkerSettings {
    /// From the settings (`IAP_CONCURRENCY`, `IAP_LEASE_MS`, `IAP_MAX_REDELIVERIES`, `IAP_SHUTDOWN_GRACE_MS`).
    public init(_ configuration: PipelineConfiguration, concurrency: Int? = nil) {
        self.init(
            concurrency: concurrency ?? configuration.concurrency, lease: configuration.lease,
            maxRedeliveries: configuration.maxRedeliveries, shutdownGrace: configuration.shutdownGrace)
    }
}
