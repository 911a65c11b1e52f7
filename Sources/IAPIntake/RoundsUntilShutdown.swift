import Logging
import ServiceLifecycle

/// What the intake's periodic services share: `round` every `every` until a graceful shutdown. A
/// failed round is logged (`failure`, debug) and the next comes as planned: these rounds report,
/// they never decide anything.
func roundsUntilShutdown(every: Duration, logger: Logger, failure: String, _ round: @escaping @Sendable () async throws -> Void) async {
    await cancelWhenGracefulShutdown {
        while !Task.isCancelled {
            do {
                try await round()
            } catch {
                logger.debug("\(failure)", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: every)
        }
    }
}
