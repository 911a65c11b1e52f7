import IAPStages
import PipelineCore
import RedisClient

/// What an operator looks at first: every queue, in-flight, retry, dead and held count, live workers.
package struct PipelineStats: Codable, Sendable, Equatable {
    package var queues: [String: Int]
    package var inflight: [String: Int]
    package var retry: Int
    package var dead: Int
    /// Purchases the purchase policy holds for an operator (`iapctl held list`).
    package var held: Int
    package var liveWorkers: [String: Int]
    package var fulfilment: Int
    /// Per queue, how long its oldest job has waited (ms since it was submitted); absent when empty.
    package var oldestAgeMs: [String: Int64] = [:]
    /// Retries whose time has come (the housekeeping moves them back to their queue).
    package var retryDue: Int = 0
    /// Subscription re-checks scheduled, and those due within the next hour (overdue included).
    package var rechecks: Int = 0
    package var rechecksDueNextHour: Int = 0
    /// The fleet's Apple breakers, by service (`verify-receipt`, `server-api`): open since (ms,
    /// Redis's clock; absent while closed), failures since the service last answered, the last reason.
    package var appleBreakers: [String: AppleBreakerStats] = [:]

    enum CodingKeys: String, CodingKey {
        case queues, inflight, retry, dead, held, fulfilment, rechecks
        case appleBreakers = "apple_breakers"
        case rechecksDueNextHour = "rechecks_due_next_hour"
        case liveWorkers = "live_workers"
        case oldestAgeMs = "oldest_age_ms"
        case retryDue = "retry_due"
    }
}

extension PipelineStore {
    /// The whole pipeline: every bucket's counts added up (a worker serving several buckets is one
    /// live worker; the oldest job is the oldest of any bucket). `scanInflight`: find in-flight
    /// lists by `SCAN` (`iapctl stats`: also a list no worker entry names any more); without it,
    /// only those of the workers `workers` lists (live, or silent and not yet reaped): no walk of
    /// the keyspace, for a page polled every few seconds.
    package func stats(lease: Duration, now: Int64 = currentTimeMs(), scanInflight: Bool = true) async throws -> PipelineStats {
        var total = PipelineStats(
            queues: Dictionary(uniqueKeysWithValues: Stage.allCases.map { ($0.rawValue, 0) }),
            inflight: Dictionary(uniqueKeysWithValues: Stage.allCases.map { ($0.rawValue, 0) }), retry: 0, dead: 0,
            held: 0, liveWorkers: [:], fulfilment: 0)
        var members: Set<String> = []
        for bucket in everyBucket {
            let (stats, live) = try await bucket.bucketStats(lease: lease, now: now, scanInflight: scanInflight)
            total.queues.merge(stats.queues, uniquingKeysWith: +)
            total.inflight.merge(stats.inflight, uniquingKeysWith: +)
            total.oldestAgeMs.merge(stats.oldestAgeMs, uniquingKeysWith: max)
            total.retry += stats.retry
            total.dead += stats.dead
            total.held += stats.held
            total.fulfilment += stats.fulfilment
            total.retryDue += stats.retryDue
            total.rechecks += stats.rechecks
            total.rechecksDueNextHour += stats.rechecksDueNextHour
            members.formUnion(live)
        }
        total.liveWorkers = Dictionary(uniqueKeysWithValues: Stage.allCases.map { ($0.rawValue, 0) })
        for member in members {
            total.liveWorkers[member.split(separator: ":").first.map(String.init) ?? "?", default: 0] += 1
        }
        for service in AppleService.allCases {
            let breaker = try await appleBreakerState(service)
            total.appleBreakers[service.rawValue] = AppleBreakerStats(
                openSinceMs: breaker["opened_at"].flatMap { Int64($0) }, failures: breaker["failures"].flatMap { Int($0) } ?? 0,
                lastFailure: breaker["last_reason"])
        }
        return total
    }

    /// This bucket's counts and its live workers.
    private func bucketStats(lease: Duration, now: Int64, scanInflight: Bool) async throws -> (PipelineStats, Set<String>) {
        let members = (try await redis.send("ZRANGEBYSCORE", keys.workers, String(now - lease.milliseconds), "+inf").array ?? [])
            .compactMap(\.string)
        var inflightKeys: [String] = []
        if !scanInflight {
            let everyMember = try await redis.send("ZRANGE", keys.workers, "0", "-1").checked().array ?? []
            inflightKeys = everyMember.compactMap(\.string).map { keys.inflight(member: $0) }
        }
        var cursor = "0"
        while scanInflight {
            // On a cluster, asked of the node that holds this bucket's keys (one slot, by its tag).
            var scan = RedisCommand("SCAN", cursor, "MATCH", keys.inflight(member: "*"), "COUNT", "500")
            scan.routingKey = Array(keys.workers.utf8)
            let page = try await redis.send(scan).array ?? []
            guard page.count == 2 else { throw RedisError.unexpectedReply("SCAN: \(page)") }
            cursor = page[0].string ?? "0"
            inflightKeys += (page[1].array ?? []).compactMap(\.string)
            if cursor == "0" { break }
        }
        var commands = Stage.allCases.map { RedisCommand("LLEN", keys.queue($0)) }
        commands += [RedisCommand("ZCARD", keys.retry), RedisCommand("LLEN", keys.dead), RedisCommand("XLEN", keys.fulfilment)]
        // The oldest job of each queue is at its right end (producers push left, workers take right).
        let oldest = try await redis.pipeline(
            Stage.allCases.map { RedisCommand("LINDEX", keys.queue($0), "-1") } + [
                RedisCommand("ZCARD", keys.rechecks), RedisCommand("ZCOUNT", keys.rechecks, "-inf", String(now + 3_600_000)),
                RedisCommand("ZCOUNT", keys.retry, "-inf", String(now)), RedisCommand("ZCARD", keys.holds),
            ])
        var ages: [String: Int64] = [:]
        for (stage, reply) in zip(Stage.allCases, oldest) {
            if let job = reply.string.flatMap({ try? Job.decode($0) }) { ages[stage.rawValue] = max(now - job.enqueuedAt, 0) }
        }
        commands += inflightKeys.map { RedisCommand("LLEN", $0) }
        let replies = try await redis.pipeline(commands).map { Int($0.int ?? 0) }
        // Replies: one queue length per stage, then retry, dead, fulfilment, then one per in-flight list.
        let stages = Stage.allCases.count
        let (retry, dead, fulfilment) = (replies[stages], replies[stages + 1], replies[stages + 2])
        var inflight = Dictionary(uniqueKeysWithValues: Stage.allCases.map { ($0.rawValue, 0) })
        for (key, count) in zip(inflightKeys, replies.dropFirst(stages + 3)) {
            let stage = key.dropFirst(keys.inflight(member: "").count).split(separator: ":").first.map(String.init) ?? "?"
            inflight[stage, default: 0] += count
        }
        let stats = PipelineStats(
            queues: Dictionary(uniqueKeysWithValues: zip(Stage.allCases.map(\.rawValue), replies.prefix(stages))),
            inflight: inflight, retry: retry, dead: dead, held: Int(oldest[Stage.allCases.count + 3].int ?? 0), liveWorkers: [:],
            fulfilment: fulfilment, oldestAgeMs: ages, retryDue: Int(oldest[Stage.allCases.count + 2].int ?? 0), rechecks: Int(oldest[Stage.allCases.count].int ?? 0),
            rechecksDueNextHour: Int(oldest[Stage.allCases.count + 1].int ?? 0))
        return (stats, Set(members))
    }
}

/// One Apple breaker as `iapctl stats` shows it.
package struct AppleBreakerStats: Codable, Sendable, Equatable {
    /// Open since (ms, Redis's clock); `nil` while closed.
    package var openSinceMs: Int64?
    /// Failures since the service last answered a verify job, and the last one's reason.
    package var failures: Int
    package var lastFailure: String?

    package init(openSinceMs: Int64?, failures: Int, lastFailure: String?) {
        self.openSinceMs = openSinceMs
        self.failures = failures
        self.lastFailure = lastFailure
    }

    enum CodingKeys: String, CodingKey {
        case failures
        case openSinceMs = "open_since_ms"
        case lastFailure = "last_failure"
    }
}
