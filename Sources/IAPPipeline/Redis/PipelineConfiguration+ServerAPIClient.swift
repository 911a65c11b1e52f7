import AppStoreServerAPI
import Logging

extension PipelineConfiguration {
    /// A Server API client whose calls count in the fleet's budget (`IAP_APPLE_API_MAX_RPS`, held
    /// on Apple's 429 for every process); `nil` without Server API keys. Shut it down after use.
    public func serverAPIClient(store: PipelineStore, maxConnections: Int = 1, logger: Logger) throws(ConfigurationError) -> ServerAPIClient? {
        guard let api = try serverAPI() else { return nil }
        return ServerAPIClient(
            configuration: api, limiter: RedisAPIRateLimiter(store: store, maxPerSecond: appleAPIMaxRPS), maxConnections: maxConnections,
            logger: logger)
    }
}
