/// Calls per Redis command, from `INFO commandstats` (`cmdstat_evalsha:calls=12,usec=…`).
///
/// Redis counts the commands a script runs as well as the EVALSHA itself, so the sum is the work
/// Redis did, and the top-level calls are the round trips clients made.
struct CommandStats: Sendable, Equatable {
    var calls: [String: Int]

    init(calls: [String: Int]) {
        self.calls = calls
    }

    init(info: String) {
        var calls: [String: Int] = [:]
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_") {
            let parts = line.dropFirst("cmdstat_".count).split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            for field in parts[1].split(separator: ",") where field.hasPrefix("calls=") {
                calls[String(parts[0])] = Int(field.dropFirst("calls=".count))
            }
        }
        self.calls = calls
    }

    /// Commands only the pipeline's scripts run (per receipt: ZADD is the grant's index of the
    /// user's purchases, `purchases:<user>`, and of their events, `user-events`, with its
    /// ZLEXCOUNT and, past the cap, ZRANGE; outside scripts only the intake's announcement every
    /// 5 s sends one ZADD).
    static let insideScripts: Set<String> = [
        "exists", "expire", "get", "hdel", "hget", "hincrby", "hset", "lmove", "lpop", "lpush", "lrem", "publish", "spublish",
        "rpush", "set", "ttl", "xadd", "zadd", "zlexcount", "zrange", "zrangebyscore", "zrem", "zscore",
    ]
    /// What the bench itself sends while it watches (never part of the pipeline's work).
    static let benchOwn: Set<String> = ["xlen", "llen", "info", "config", "ltrim", "hmget"]

    static func - (after: CommandStats, before: CommandStats) -> CommandStats {
        CommandStats(calls: after.calls.reduce(into: [:]) { delta, entry in
            let change = entry.value - (before.calls[entry.key] ?? 0)
            if change != 0 { delta[entry.key] = change }
        })
    }

    /// Every command the pipeline made Redis run, scripts' inner commands included.
    var pipelineCommands: Int {
        calls.filter { !Self.benchOwn.contains($0.key) }.values.reduce(0, +)
    }

    /// Requests the pipeline's processes sent (EVALSHA, BLMOVE, heartbeats, …).
    var roundTrips: Int {
        calls.filter { !Self.benchOwn.contains($0.key) && !Self.insideScripts.contains($0.key) }.values.reduce(0, +)
    }
}
