import RedisClient

/// The queues at a glance, cheap enough to read every few seconds (no SCAN, unlike `stats`).
public struct QueueSample: Sendable, Equatable {
    public var depths: [String: Int]
    /// How long each non-empty queue's oldest job has waited (ms since it was submitted).
    public var oldestAgeMs: [String: Int64]
    public var retry: Int
    public var dead: Int
    public var held: Int
}

extension PipelineStore {
    /// One pipeline of `LLEN`, `LINDEX -1` per queue and the sizes of the retry set, dead letters and holds.
    public func queueSample(now: Int64 = currentTimeMs()) async throws -> QueueSample {
        var commands = Stage.allCases.flatMap { [RedisCommand("LLEN", keys.queue($0)), RedisCommand("LINDEX", keys.queue($0), "-1")] }
        commands += [RedisCommand("ZCARD", keys.retry), RedisCommand("LLEN", keys.dead), RedisCommand("ZCARD", keys.holds)]
        let replies = try await redis.pipeline(commands)
        var depths: [String: Int] = [:]
        var ages: [String: Int64] = [:]
        for (index, stage) in Stage.allCases.enumerated() {
            depths[stage.rawValue] = Int(replies[2 * index].int ?? 0)
            if let job = replies[2 * index + 1].string.flatMap({ try? Job.decode($0) }) { ages[stage.rawValue] = max(now - job.enqueuedAt, 0) }
        }
        let base = 2 * Stage.allCases.count
        return QueueSample(
            depths: depths, oldestAgeMs: ages, retry: Int(replies[base].int ?? 0), dead: Int(replies[base + 1].int ?? 0),
            held: Int(replies[base + 2].int ?? 0))
    }
}
