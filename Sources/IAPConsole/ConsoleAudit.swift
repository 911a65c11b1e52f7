import Logging
import PipelineCore
import RedisClient

/// Every console action, kept in Redis for whoever comes next on call (`iap:console:audit`, a
/// stream capped near `keep` entries): sign-ins (and refusals), hold decisions, dead-letter
/// replays and purges, support's look-ups at Apple and grants. Each entry: `user` (from the
/// session, never a form), `action`, `target`, `outcome`. Shown at `/audit` to operators and admins.
struct ConsoleAudit: Sendable {
    static let keep = 10_000
    let redis: RedisClient
    let keys: RedisKeys

    /// Records an action that happened; a Redis failure here is logged, not thrown: the action
    /// itself is done and its answer must say so.
    func record(_ action: String, by user: String, target: String, outcome: String, logger: Logger) async {
        do {
            try await redis.send(
                "XADD", keys.consoleAudit, "MAXLEN", "~", String(Self.keep), "*",
                "user", String(user.prefix(128)), "action", action, "target", String(target.prefix(256)), "outcome", String(outcome.prefix(256))
            ).checked()
        } catch {
            logger.error("console audit not recorded", metadata: ["action": "\(action)", "user": "\(user.prefix(64))", "error": "\(error)"])
        }
    }

    struct Entry: Sendable {
        var at: Int64
        var fields: [String: String]
    }

    /// The newest `count` entries, newest first (`XREVRANGE … COUNT`), before `before` (an entry id).
    func newest(_ count: Int, before: String? = nil) async throws -> [(id: String, entry: Entry)] {
        let end = before.map { "(" + $0 } ?? "+"
        let reply = try await redis.send("XREVRANGE", keys.consoleAudit, end, "-", "COUNT", String(count)).checked()
        return (reply.array ?? []).compactMap { item in
            guard let parts = item.array, parts.count == 2, let id = parts[0].string else { return nil }
            return (id, Entry(at: Int64(id.prefix { $0 != "-" }) ?? 0, fields: parts[1].stringDictionary))
        }
    }
}
