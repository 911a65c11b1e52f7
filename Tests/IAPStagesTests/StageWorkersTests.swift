import Foundation
@testable import PipelineCore
@testable import IAPOperations
import NIOConcurrencyHelpers
import RedisClient
import TestSupport
import PipelineTestSupport
import Testing

/// One stage in one process over several buckets: a worker per bucket, one budget.
@Suite struct StageWorkersTests {
    /// Holds each job until the test lets one go; records which bucket's ticket each job was.
    final class OneAtATimeHandler: JobHandler, Sendable {
        let stage = Stage.verify
        let layout: BucketLayout
        let started: AsyncStream<Int>
        private let startedContinuation: AsyncStream<Int>.Continuation
        private let gate = NIOLockedValueBox<[CheckedContinuation<Void, Never>]>([])
        let running = NIOLockedValueBox((now: 0, most: 0))

        init(layout: BucketLayout) {
            self.layout = layout
            (started, startedContinuation) = AsyncStream<Int>.makeStream()
        }

        func handle(_ held: HeldJob) async {
            let (payload, job, worker) = (held.payload, held.job, held.worker)
            running.withLockedValue { $0 = (now: $0.now + 1, most: max($0.most, $0.now + 1)) }
            startedContinuation.yield(layout.bucket(ofTicket: job.ticket))
            await withCheckedContinuation { continuation in gate.withLockedValue { $0.append(continuation) } }
            running.withLockedValue { $0.now -= 1 }
            var next = job
            next.stage = .dedupe
            _ = await worker.transition(ForwardJob.self) { try await worker.store.forward(payload, member: worker.member, to: next) }
        }

        /// Lets the oldest held job finish, once one is held.
        func releaseOne() async {
            while true {
                let first = gate.withLockedValue { $0.isEmpty ? nil : $0.removeFirst() }
                if let first { return first.resume() }
                await Task.yield()
            }
        }
    }

    /// A digest whose submission lands in `bucket`.
    static func digest(inBucket bucket: Int, of layout: BucketLayout, _ n: Int) -> String {
        (0...).lazy.map { "d\(n)-\($0)" }.first { layout.bucket(ofDigest: $0) == bucket }!
    }

    @Test func aQuietBucketIsServedWhileABusyOneHasAQueueAndTheBudgetHolds() async throws {
        try await withRedis { redis, _ in
            let layout = BucketLayout(count: 4)
            let store = PipelineStore(redis: redis, keys: RedisKeys(prefix: "iap", layout: layout))
            // Twelve jobs in bucket 0, then one in bucket 3.
            for n in 0..<12 { try await Self.submit(store, digest: Self.digest(inBucket: 0, of: layout, n)) }
            try await Self.submit(store, digest: Self.digest(inBucket: 3, of: layout, 99))
            let handler = OneAtATimeHandler(layout: layout)
            let workers = StageWorkers(
                handler: handler, store: store,
                settings: WorkerSettings(concurrency: 2, lease: .seconds(30), block: .milliseconds(100), housekeeping: .milliseconds(50)),
                logger: testLogger)
            #expect(workers.workers.count == 4 && Set(workers.workers.map(\.member)).count == 1)
            let running = Task { try await workers.run() }
            var started: [Int] = []
            var events = handler.started.makeAsyncIterator()
            for _ in 0..<13 {
                started.append(try #require(await events.next()))
                await handler.releaseOne()
            }
            // Bucket 3's one job did not wait for bucket 0's queue to drain.
            #expect(try #require(started.firstIndex(of: 3)) < 4, "\(started)")
            workers.stop()
            try await running.value
            // Within the budget, plus at most one per bucket for jobs a blocking wait brought.
            #expect(handler.running.withLockedValue { $0.most } <= 2 + 4)
            // Each job moved on within its own bucket.
            #expect(try await redis.send("LLEN", store.keys.inBucket(0).queue(.dedupe)).int == 12)
            #expect(try await redis.send("LLEN", store.keys.inBucket(3).queue(.dedupe)).int == 1)
            for bucket in 0..<4 {
                #expect(try await redis.send("LLEN", store.keys.inBucket(bucket).queue(.verify)).int == 0)
                #expect(try await redis.send("ZCARD", store.keys.inBucket(bucket).workers).int == 0)
            }
        }
    }

    static func submit(_ store: PipelineStore, digest: String) async throws {
        let job = Job(ticket: TicketIDs.make(), userID: "u", receiptData: "eA==", productID: nil, transactionID: nil, enqueuedAt: 1)
        let (ticket, created) = try await store.submit(job, receiptDigest: digest, ttl: .seconds(3600))
        #expect(created && ticket.hasPrefix("\(store.keys.layout.bucket(ofDigest: digest))."))
    }
}

/// Ticket ids for tests that have no intake.
enum TicketIDs {
    static func make() -> String { String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(22)) }
}
