import Logging
import Metrics
import NIOConcurrencyHelpers
import RedisClient

/// Keeps a bucket's fulfilment stream and dead letters bounded (`RetentionSettings`), from the
/// grant stage's housekeeping: each bucket at most once per `every` per process. A dropped dead
/// letter is counted (`iap_dead_letters_dropped_total{reason}`) and logged with its ticket and
/// reason; trimmed stream entries are counted (`iap_fulfilment_trimmed_total`).
package final class RetentionSweep: Sendable {
    package let settings: RetentionSettings
    private let lastRun = NIOLockedValueBox([Int: ContinuousClock.Instant]())

    package init(settings: RetentionSettings) {
        self.settings = settings
        _ = Counter(label: "iap_fulfilment_trimmed_total")
    }

    /// Trims the worker's bucket when its turn has come.
    package func runIfDue(_ worker: WorkerContext) async throws {
        let bucket = worker.store.keys.bucket
        let due = lastRun.withLockedValue { runs -> Bool in
            if let last = runs[bucket], ContinuousClock.now - last < settings.every { return false }
            runs[bucket] = .now
            return true
        }
        guard due else { return }
        try await trim(worker.store, logger: worker.logger)
    }

    /// One round on `store`'s bucket: the stream, then the dead letters.
    package func trim(_ store: PipelineStore, logger: Logger) async throws {
        let floor = try await store.redis.send("HGET", store.keys.refundSweep, "cursor:b\(store.keys.bucket)").string.flatMap { Int64($0) }
        let stream = try await store.trimFulfilmentStream(retention: settings.fulfilment, floorMs: floor, limit: settings.streamBatch)
        if stream.trimmed > 0 { Counter(label: "iap_fulfilment_trimmed_total").increment(by: stream.trimmed) }
        let dropped = try await store.trimDeadLetters(max: settings.deadMax, maxAge: settings.deadMaxAge, limit: settings.deadBatch)
        for entry in dropped {
            let letter = try? DeadLetter.decode(entry)
            let reason = letter?.reason ?? "unreadable"
            Counter(label: "iap_dead_letters_dropped_total", dimensions: [("reason", reason)]).increment()
            logger.warning("a dead letter past its bound is dropped", metadata: [
                "ticket": "\(letter?.ticket ?? "-")", "reason": "\(reason)", "stage": "\(letter?.stage ?? "-")",
                "at": "\(letter?.at ?? 0)",
            ])
        }
    }
}

extension PipelineStore {
    /// `trim_fulfilment_stream` on this store's bucket (`now`: a test's pinned time).
    package func trimFulfilmentStream(
        retention: Duration, floorMs: Int64?, limit: Int = 10_000, now: Int64? = nil
    ) async throws -> (trimmed: Int, below: String) {
        try await run(TrimFulfilmentStream(keys, retention: retention, floorMs: floorMs, limit: limit, now: now))
    }

    /// `trim_dead_letters` on this store's bucket: the entries dropped, oldest first.
    package func trimDeadLetters(max: Int, maxAge: Duration, limit: Int = 500, now: Int64? = nil) async throws -> [String] {
        try await run(TrimDeadLetters(keys, max: max, maxAge: maxAge, limit: limit, now: now))
    }
}
