import ClusterHarness
import Foundation
import PipelineCore
import IAPStages
import LoopbackPort
import RedisClient

/// The `rechecks` scenario: `subscriptions` subscriptions scheduled for re-checks on a fresh
/// redis-server (no persistence), their records as the grant stage writes them, `due` of them
/// due now. Reports what the schedule and the records cost in Redis memory, and how fast
/// `promote_due_rechecks` drains the due ones in batches — and what a call costs when nothing
/// is due, which stays flat however many are scheduled (it reads the zset's low end only).
package struct RecheckBench: Sendable {
    package var subscriptions: Int
    package var due: Int
    package var batch: Int

    package init(subscriptions: Int = 1_000_000, due: Int = 10_000, batch: Int = 500) {
        self.subscriptions = subscriptions
        self.due = due
        self.batch = batch
    }

    package func run(workDirectory: URL, progress: @Sendable (String) -> Void) async throws -> RecheckBenchResult {
        let scratch = try await ScratchRedis(folder: workDirectory.appendingPathComponent("rechecks"))
        defer { scratch.stop() }
        let redis = scratch.client
        let store = PipelineStore(redis: redis, keys: RedisKeys())
        let keys = store.keys
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func usedMemory() async throws -> Int {
            let info = try await redis.send("INFO", "memory").string ?? ""
            let line = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("used_memory:") }
            return line.flatMap { Int($0.dropFirst("used_memory:".count)) } ?? 0
        }
        let base = try await usedMemory()
        // The schedule: `due` are due now, the rest over the next 30 days.
        let chunk = 10_000
        for start in stride(from: 0, to: subscriptions, by: chunk) {
            var commands: [RedisCommand] = []
            for index in start..<min(start + chunk, subscriptions) {
                let dueAt = index < due ? now - Int64(index) : now + 60_000 + Int64(index) * 2_592_000_000 / Int64(subscriptions)
                commands.append(RedisCommand("ZADD", keys.rechecks, String(dueAt), Self.id(index)))
            }
            _ = try await redis.pipeline(commands)
        }
        let withSchedule = try await usedMemory()
        progress("rechecks: \(subscriptions) scheduled")
        for start in stride(from: 0, to: subscriptions, by: chunk) {
            var commands: [RedisCommand] = []
            for index in start..<min(start + chunk, subscriptions) {
                let expires = String(now + 3_600_000 + Int64(index % 1000) * 60_000)
                commands.append(RedisCommand(
                    "HSET", keys.subscription(originalTransactionID: Self.id(index)), "user_id", "player-\(index)",
                    "product_id", "vip.monthly", "status", "active", "expires_at", expires, "event_at", String(now),
                    "cause", "grant", "latest_transaction_id", Self.id(index), "entitlements", "premium,no_ads",
                    "environment", "Production", "updated_at", String(now), "auto_renew", "1"))
            }
            _ = try await redis.pipeline(commands)
        }
        let withRecords = try await usedMemory()
        progress("rechecks: \(subscriptions) records written")
        let schedule = RecheckSchedule.standard
        // A call with nothing due, on the full schedule.
        let idleCalls = 1000
        let idleStart = ContinuousClock.now
        for _ in 0..<idleCalls {
            _ = try await store.promoteDueRechecks(schedule: schedule, ticketTTL: .seconds(3600), limit: batch, now: now - Int64(due) - 1)
        }
        let idleMicros = (ContinuousClock.now - idleStart) / .microseconds(1) / Double(idleCalls)
        // The drain.
        var queued = 0
        var calls = 0
        let drainStart = ContinuousClock.now
        while true {
            let moved = try await store.promoteDueRechecks(schedule: schedule, ticketTTL: .seconds(3600), limit: batch, now: now)
            calls += 1
            if moved == 0 { break }
            queued += moved
        }
        let drainSeconds = (ContinuousClock.now - drainStart) / .seconds(1)
        let queueLength = Int(try await redis.send("LLEN", keys.queue(.verify)).int ?? 0)
        guard queued == due, queueLength == due else {
            throw BenchError("rechecks: \(queued) queued, \(queueLength) on the verify queue, \(due) were due")
        }
        let stillScheduled = Int(try await redis.send("ZCARD", keys.rechecks).int ?? 0)
        guard stillScheduled == subscriptions else { throw BenchError("rechecks: \(stillScheduled) still scheduled of \(subscriptions)") }
        return RecheckBenchResult(
            subscriptions: subscriptions, scheduleBytesPerSubscription: Double(withSchedule - base) / Double(subscriptions),
            recordBytesPerSubscription: Double(withRecords - withSchedule) / Double(subscriptions),
            totalMB: Double(withRecords - base) / 1_048_576, due: due, batch: batch,
            drainPerSecond: Double(due) / drainSeconds, microsecondsPerBatch: drainSeconds * 1e6 / Double(max(calls - 1, 1)),
            idleCallMicroseconds: idleMicros)
    }

    static func id(_ index: Int) -> String { String(2_000_000_000_000_000 + index) }
}

package struct RecheckBenchResult: Sendable, Codable {
    package var subscriptions: Int
    /// The `rechecks` zset's cost, per scheduled subscription.
    package var scheduleBytesPerSubscription: Double
    /// The subscription record's (`subscription:<id>`), per subscription.
    package var recordBytesPerSubscription: Double
    package var totalMB: Double
    package var due: Int
    package var batch: Int
    /// Due re-checks turned into jobs (with their tickets) per second.
    package var drainPerSecond: Double
    package var microsecondsPerBatch: Double
    /// One `promote_due_rechecks` call, client round trip included, when nothing is due.
    package var idleCallMicroseconds: Double
}
