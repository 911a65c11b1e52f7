import ClusterHarness
import RedisClient

extension LocalCluster {
    /// Starts the processes, measures with a client of their Redis, and stops them: the scenario
    /// fails, under its name, if any process crashed or would not stop, since a figure from a
    /// run with a crash means nothing. On a throw everything is stopped all the same.
    nonisolated func measured<Result: Sendable>(
        _ scenario: String, workers: Bool = true, _ measure: (RedisClient) async throws -> Result
    ) async throws -> Result {
        let redis = RedisClient(configuration: try RedisConfiguration(url: redisURL), poolSize: 2)
        do {
            try await start(workers: workers)
            let result = try await measure(redis)
            await redis.close()
            let unclean = await stop() + (await crashes())
            guard unclean.isEmpty else { throw BenchError("\(scenario): \(unclean.joined(separator: "; "))") }
            return result
        } catch {
            await redis.close()
            _ = await stop()
            throw error
        }
    }
}
