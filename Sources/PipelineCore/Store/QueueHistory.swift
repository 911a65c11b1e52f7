import PlainJSON
import RedisClient

/// The queues' last hour, a sample a minute, as the intakes' sampler keeps it
/// (`queue-history`, `record_queue_sample.lua`): what the console's overview charts.
package struct QueueHistory: Sendable, Equatable {
    /// One minute's look at the queues: the first sample an intake took in it.
    package struct Sample: Sendable, Equatable {
        /// The minute, ms (a multiple of 60000).
        package var at: Int64
        /// Jobs waiting per stage.
        package var queued: [String: Int]
        package var retry: Int
        package var dead: Int
        package var held: Int
        /// Entries ever added to the fulfilment streams: a minute's rise is its throughput.
        package var events: Int

        package init(at: Int64, queued: [String: Int], retry: Int, dead: Int, held: Int, events: Int) {
            self.at = at
            self.queued = queued
            self.retry = retry
            self.dead = dead
            self.held = held
            self.events = events
        }

        package init(_ sample: QueueSample, minute: Int64) {
            self.init(at: minute, queued: sample.depths, retry: sample.retry, dead: sample.dead, held: sample.held, events: sample.events)
        }

        package var json: JSONValue {
            let depths = JSONObject(queued.mapValues { JSONValue.int(Int64($0)) })
            return .object([
                "at": .int(at), "queued": .object(depths), "retry": .int(Int64(retry)),
                "dead": .int(Int64(dead)), "held": .int(Int64(held)), "events": .int(Int64(events)),
            ])
        }

        /// `nil` for text of another shape (never written).
        package init?(json text: String) {
            guard let value = try? JSONValue(parsing: text), let at = value["at"]?.int64 else { return nil }
            var queued: [String: Int] = [:]
            for (stage, depth) in value["queued"]?.object ?? [:] { queued[stage] = depth.int64.map { Int($0) } ?? 0 }
            func count(_ name: String) -> Int { value[name]?.int64.map { Int($0) } ?? 0 }
            self.init(at: at, queued: queued, retry: count("retry"), dead: count("dead"), held: count("held"), events: count("events"))
        }

        /// Jobs waiting in every stage.
        package var totalQueued: Int { queued.values.reduce(0, +) }
    }

    /// How many minutes before the newest stay: an hour.
    package static let minutes = 60

    /// Oldest first.
    package var samples: [Sample]

    package init(samples: [Sample]) {
        self.samples = samples.sorted { $0.at < $1.at }
    }

    /// Each minute's events less the minute before's (the first has none: `nil`); a drop (a
    /// stream reset by a migration) counts as none.
    package var eventsPerMinute: [Int?] {
        samples.indices.map { index in
            guard index > 0, samples[index].at - samples[index - 1].at == 60_000 else { return nil }
            return max(samples[index].events - samples[index - 1].events, 0)
        }
    }
}

/// `record_queue_sample`: one minute's sample kept (the first of the minute), the hour's oldest gone.
package struct RecordQueueSample: PipelineScript {
    package static let script = LuaSource.script("record_queue_sample")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, sample: QueueHistory.Sample) {
        self.keys = [keys.queueHistory]
        arguments = [String(sample.at), sample.json.canonicalText, String(QueueHistory.minutes)]
    }

    /// `true` when kept; `false` when the minute had its sample already.
    package static func decode(_ reply: RedisReply) throws -> Bool { try reply.flag(script: name) }
}

extension PipelineStore {
    /// Keeps `sample` as its minute's (`now` rounded down to the minute), unless the minute has one.
    @discardableResult
    package func recordQueueSample(_ sample: QueueSample, now: Int64) async throws -> Bool {
        try await run(RecordQueueSample(keys, sample: QueueHistory.Sample(sample, minute: now / 60_000 * 60_000)))
    }

    /// The last hour's samples, oldest first.
    package func queueHistory() async throws -> QueueHistory {
        let reply = try await redis.send("HGETALL", keys.queueHistory)
        if case .error(let message) = reply { throw RedisError.server(message) }
        return QueueHistory(samples: reply.stringDictionary.values.compactMap(QueueHistory.Sample.init(json:)))
    }
}
