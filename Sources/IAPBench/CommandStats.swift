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
    /// ZLEXCOUNT and, past the cap, ZRANGE; LLEN and ZCARD are `submit_receipt`'s look at the
    /// verify backlog under `IAP_MAX_QUEUE_DEPTH`, and ZCARD the rate limiter's and the daily cap's;
    /// outside scripts only the intake's announcement every 5 s sends one ZADD). LLEN and ZCARD were
    /// once counted as round trips: the queue-depth check looked like a round trip the intake
    /// gained (3.6 a receipt end to end against 2.6 for the stages alone). The other way round,
    /// the granter's `GET` of a user's bound token (`user-token:<user>`, Set App Account Token
    /// on, a purchase without a token: every receipt of the bench) is counted here as a script's:
    /// the granter reads a worker's jobs' tokens in one pipeline (a round trip a batch at peak, one
    /// a receipt at a light rate) that `roundTrips` leaves out.
    static let insideScripts: Set<String> = [
        "exists", "expire", "get", "hdel", "hget", "hincrby", "hset", "llen", "lmove", "lpop", "lpush", "lrem", "publish", "spublish",
        "rpush", "set", "ttl", "xadd", "zadd", "zcard", "zlexcount", "zrange", "zrangebyscore", "zrem", "zscore",
    ]
    /// What the bench itself sends while it measures (never part of the pipeline's work; its
    /// LLEN and ZCARD come only between the measured windows).
    static let benchOwn: Set<String> = ["xlen", "info", "config", "ltrim", "hmget"]

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
