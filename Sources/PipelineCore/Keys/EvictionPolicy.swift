import IAPSettings
import RedisClient

/// Whether the Redis the pipeline runs on keeps every key. Under `allkeys-*` a claim (`txn:`) can
/// be evicted and a purchase granted twice; under `volatile-*` the replay memory (`signature:`),
/// notifications' and receipts' keys can. Only `noeviction` is safe (BullMQ refuses any other;
/// Sidekiq warns).
package enum EvictionPolicy: Sendable, Equatable {
    /// `noeviction`: writes fail when memory is full, nothing is dropped.
    case keepsEveryKey
    /// Any other policy, by name.
    case evicts(String)
    /// `CONFIG` is refused (a managed Redis that hides it): the policy cannot be known.
    case hidden(String)

    /// Reads `maxmemory-policy` (`CONFIG GET`). Throws when Redis does not answer.
    package static func read(from redis: some RedisCommandSending) async throws -> EvictionPolicy {
        let reply = try await redis.execute(RedisCommand("CONFIG", "GET", "maxmemory-policy"))
        if case .error(let message) = reply { return .hidden(message) }
        let items = (reply.array ?? []).compactMap(\.string)
        guard items.count == 2, items[0] == "maxmemory-policy" else { return .hidden("CONFIG GET maxmemory-policy answered \(reply)") }
        return items[1] == "noeviction" ? .keepsEveryKey : .evicts(items[1])
    }

    /// What the process says of a policy that evicts: one line naming the setting and the fix.
    package static func refusal(_ policy: String) -> ConfigurationError {
        ConfigurationError(
            "maxmemory-policy",
            "Redis runs with maxmemory-policy \(policy), which evicts keys: a purchase's claim could vanish and the purchase be "
                + "granted twice. Set maxmemory-policy noeviction (redis.conf, or CONFIG SET maxmemory-policy noeviction)")
    }
}
