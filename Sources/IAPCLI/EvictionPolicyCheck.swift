import Foundation
import PipelineCore
import Logging
import RedisClient

/// Every pipeline process runs only on a Redis that keeps every key (`EvictionPolicy`). Read at
/// start: an evicting policy stops the process (exit 2, naming `maxmemory-policy`); a hidden one
/// (`CONFIG` refused) is a warning. A Redis that does not answer yet is asked again in the
/// background until it does, and an evicting policy found then stops the process the same way
/// (its jobs in flight go back to the queues through the reaper, as after any crash).
package enum EvictionPolicyCheck {
    package static func run(_ redis: RedisClient, logger: Logger, retryEvery: Duration = .seconds(1)) async {
        if await checked(redis, logger: logger) { return }
        logger.warning("Redis does not answer yet: its maxmemory-policy is checked once it does")
        Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: retryEvery)
                if await checked(redis, logger: logger) { return }
            }
        }
    }

    /// `true` once the policy was read (and found acceptable: an evicting one exits).
    private static func checked(_ redis: RedisClient, logger: Logger) async -> Bool {
        let policy: EvictionPolicy
        do {
            policy = try await EvictionPolicy.read(from: redis)
        } catch {
            return false
        }
        switch policy {
        case .keepsEveryKey:
            return true
        case .hidden(let why):
            logger.warning(
                "cannot read Redis's maxmemory-policy (CONFIG is refused): make sure it is noeviction, or claims can be evicted",
                metadata: ["reply": "\(why.prefix(200))"])
            return true
        case .evicts(let name):
            logger.critical("Redis evicts keys: stopping", metadata: ["maxmemory-policy": "\(name)"])
            failConfiguration(EvictionPolicy.refusal(name))
        }
    }
}
