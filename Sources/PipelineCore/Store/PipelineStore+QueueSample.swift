import RedisClient

/// The queues at a glance, cheap enough to read every few seconds (no SCAN, unlike `stats`).
package struct QueueSample: Sendable, Equatable {
    package var depths: [String: Int]
    /// How long each non-empty queue's oldest job has waited (ms since it was submitted).
    package var oldestAgeMs: [String: Int64]
    package var retry: Int
    package var dead: Int
    package var held: Int
}

extension PipelineStore {
    /// One pipeline of `LLEN`, `LINDEX -1` per queue and the sizes of the retry set and dead
    /// letters and the holds per bucket: every bucket added up.
    package func queueSample(now: Int64 = currentTimeMs()) async throws -> QueueSample {
        let buckets = keys.everyBucket
        let perBucket = 2 * Stage.allCases.count + 3
        let commands = buckets.flatMap { keys in
            Stage.allCases.flatMap { [RedisCommand("LLEN", keys.queue($0)), RedisCommand("LINDEX", keys.queue($0), "-1")] }
                + [RedisCommand("ZCARD", keys.retry), RedisCommand("LLEN", keys.dead), RedisCommand("ZCARD", keys.holds)]
        }
        let replies = try await redis.pipeline(commands)
        var sample = QueueSample(depths: [:], oldestAgeMs: [:], retry: 0, dead: 0, held: 0)
        for bucket in buckets.indices {
            let base = bucket * perBucket
            for (index, stage) in Stage.allCases.enumerated() {
                sample.depths[stage.rawValue, default: 0] += Int(replies[base + 2 * index].int ?? 0)
                if let job = replies[base + 2 * index + 1].string.flatMap({ try? Job.decode($0) }) {
                    sample.oldestAgeMs[stage.rawValue] = max(sample.oldestAgeMs[stage.rawValue] ?? 0, now - job.enqueuedAt, 0)
                }
            }
            sample.retry += Int(replies[base + 2 * Stage.allCases.count].int ?? 0)
            sample.dead += Int(replies[base + 2 * Stage.allCases.count + 1].int ?? 0)
            sample.held += Int(replies[base + 2 * Stage.allCases.count + 2].int ?? 0)
        }
        return sample
    }
}
