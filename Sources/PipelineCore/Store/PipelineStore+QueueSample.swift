import RedisClient

/// The queues at a glance, cheap enough to read every few seconds (no SCAN, unlike `stats`).
package struct QueueSample: Sendable, Equatable {
    package var depths: [String: Int]
    /// How long each non-empty queue's oldest job has waited (ms since it was submitted).
    package var oldestAgeMs: [String: Int64]
    package var retry: Int
    package var dead: Int
    package var held: Int
    /// Entries ever added to the fulfilment streams (`XINFO STREAM`'s `entries-added`, every
    /// bucket's): what the pipeline has done, whose rise is its throughput.
    package var events: Int = 0

    package init(depths: [String: Int], oldestAgeMs: [String: Int64], retry: Int, dead: Int, held: Int, events: Int = 0) {
        self.depths = depths
        self.oldestAgeMs = oldestAgeMs
        self.retry = retry
        self.dead = dead
        self.held = held
        self.events = events
    }
}

extension PipelineStore {
    /// One pipeline of `LLEN`, `LINDEX -1` per queue and the sizes of the retry set and dead
    /// letters and the holds per bucket: every bucket added up.
    package func queueSample(now: Int64 = currentTimeMs()) async throws -> QueueSample {
        let buckets = keys.everyBucket
        let perBucket = 2 * Stage.allCases.count + 4
        let commands = buckets.flatMap { keys in
            Stage.allCases.flatMap { [RedisCommand("LLEN", keys.queue($0)), RedisCommand("LINDEX", keys.queue($0), "-1")] }
                + [RedisCommand("ZCARD", keys.retry), RedisCommand("LLEN", keys.dead), RedisCommand("ZCARD", keys.holds),
                   Self.streamInfo(keys.fulfilment)]
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
            // No stream yet answers an error: nothing added.
            sample.events += Self.entriesAdded(replies[base + 2 * Stage.allCases.count + 3])
        }
        return sample
    }

    /// `XINFO STREAM key`, routed by its key (the third word: a cluster client would take the second).
    static func streamInfo(_ key: String) -> RedisCommand {
        var command = RedisCommand("XINFO", "STREAM", key)
        command.routingKey = Array(key.utf8)
        return command
    }

    /// `XINFO STREAM`'s `entries-added` (Redis 7), else its `length`; 0 for no stream.
    static func entriesAdded(_ reply: RedisReply) -> Int {
        guard let items = reply.array else { return 0 }
        var length = 0
        for index in stride(from: 0, to: items.count - 1, by: 2) {
            switch items[index].string {
            case "entries-added": return Int(items[index + 1].int ?? 0)
            case "length": length = Int(items[index + 1].int ?? 0)
            default: continue
            }
        }
        return length
    }
}
