import AppStoreServerAPI
import IAPSettings
import Logging
import PipelineCore

extension PipelineConfiguration {
    /// A Server API client whose calls count in the fleet's budget (`IAP_APPLE_API_MAX_RPS`, held
    /// on Apple's 429 for every process); `nil` without Server API keys. Shut it down after use.
    /// With `IAP_APPS_FILE`, the first app's.
    package func serverAPIClient(store: PipelineStore, maxConnections: Int = 1, logger: Logger) throws(ConfigurationError) -> ServerAPIClient? {
        guard let (bundleID, api) = try serverAPIs().first else { return nil }
        return client(api, bundleID: bundleID, store: store, maxConnections: maxConnections, logger: logger)
    }

    private func client(
        _ api: ServerAPIConfiguration, bundleID: String, store: PipelineStore, maxConnections: Int, logger: Logger
    ) -> ServerAPIClient {
        ServerAPIClient(
            configuration: api,
            limiter: RedisAPIRateLimiter(store: store, maxPerSecond: serverAPI.maxRPS, app: appsFile == nil ? nil : bundleID),
            maxConnections: maxConnections, logger: logger)
    }
}

extension PipelineConfiguration {
    /// One client per app with a Server API key (`serverAPIs()`), each token carrying its app's
    /// `bid`, in the order apps are tried. Shut each down after use.
    package func serverAPIClients(
        store: PipelineStore, maxConnections: Int = 1, logger: Logger
    ) throws(ConfigurationError) -> [(bundleID: String, client: ServerAPIClient)] {
        try serverAPIs().map { bundleID, api in
            (bundleID, client(api, bundleID: bundleID, store: store, maxConnections: maxConnections, logger: logger))
        }
    }
}
