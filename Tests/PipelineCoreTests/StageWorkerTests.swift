import Foundation
@testable import PipelineCore
import Logging
import NIOConcurrencyHelpers
import RedisClient
import TestSupport
import Testing

/// The worker runtime: leases, graceful stop, Redis going away.
@Suite struct StageWorkerTests {
    /// A verify-stage handler that holds each job until the test lets it go, then forwards it.
    final class GateHandler: JobHandler, Sendable {
        let stage = Stage.verify
        let taken: AsyncStream<String>
        private let takenContinuation: AsyncStream<String>.Continuation
        private let gate = NIOLockedValueBox<[CheckedContinuation<Void, Never>]>([])
        let results = NIOLockedValueBox<[TransitionResult?]>([])

        init() {
            (taken, takenContinuation) = AsyncStream<String>.makeStream()
        }

        func handle(_ held: HeldJob) async {
            let (payload, worker) = (held.payload, held.worker)
            takenContinuation.yield(payload)
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in gate.withLockedValue { $0.append(continuation) } }
            } onCancel: {
                self.release()
            }
            if Task.isCancelled { return }
            var next = held.job
            next.stage = .dedupe
            let result = await worker.transition(ForwardJob.self) {
                try await worker.store.forward(payload, member: worker.member, to: next)
            }
            results.withLockedValue { $0.append(result) }
        }

        func release() {
            let waiting = gate.withLockedValue { gate in
                defer { gate.removeAll() }
                return gate
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    static func submit(_ store: PipelineStore, _ ticket: String) async throws {
        let job = Job(ticket: ticket, userID: "u", receiptData: "eA==", productID: nil, transactionID: nil, enqueuedAt: 1)
        _ = try await store.submit(job, receiptDigest: ticket, ttl: .seconds(3600))
    }

    /// Starts a verify worker around `handler`; the task ends when the worker has stopped.
    static func start(
        _ handler: GateHandler, _ store: PipelineStore, _ settings: WorkerSettings
    ) -> (StageWorker, Task<Void, any Error>) {
        let worker = StageWorker(handler: handler, store: store, settings: settings, logger: testLogger)
        return (worker, Task { try await worker.run() })
    }

    @Test func aWorkerThatLostItsLeaseCannotAckWhenItResumes() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: RedisKeys(prefix: "{t}iap"))
            let handler = GateHandler()
            // The test is the reaper: it holds the reaper lock, so the worker's own housekeeping never reaps.
            try await redis.send("SET", store.keys.reaperLock, "test-reaper", "PX", "600000")
            // Queued before the worker starts: it takes the job with take_jobs and then waits for its one
            // slot, never in BLMOVE (which would take the job back the moment the reaper returns it,
            // as a worker whose queue seemed empty does; CI saw that when the worker started first).
            try await Self.submit(store, "T1")
            let (worker, running) = Self.start(handler, store, WorkerSettings(concurrency: 1, lease: .milliseconds(60_000), block: .milliseconds(100), housekeeping: .milliseconds(50)))
            var taken = handler.taken.makeAsyncIterator()
            let payload = try #require(await taken.next())
            // As if the worker had been paused past its lease: the reaper hands its job to others.
            try await store.heartbeat(member: worker.member)
            let reaped = try await store.reapExpiredWorkers(
                reaper: "test-reaper", lease: .milliseconds(60_000), maxRedeliveries: 5, lock: .milliseconds(600_000), now: currentTimeMs() + 3_600_000)
            #expect(reaped.returned == 1)
            #expect(try await redis.send("LRANGE", store.keys.queue(.verify), "0", "-1") == .array([.bulk(Array(payload.utf8))]))
            // Now stop taking new jobs and let the paused one resume: its forward must not move anything.
            try await redis.send("DEL", store.keys.queue(.verify))
            handler.release()
            worker.stop()
            try await running.value
            #expect(handler.results.withLockedValue { $0 } == [.leaseLost])
            #expect(try await redis.send("LLEN", store.keys.queue(.dedupe)) == .integer(0))
        }
    }

    /// Redis moved a job into the worker's list but the BLMOVE reply never arrived (a crash or a
    /// broken connection): the worker is alive, so no reaper will return it; the worker adopts it.
    @Test func aJobLeftInTheWorkersOwnListWithoutAHandlerIsAdopted() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: RedisKeys(prefix: "{t}iap"))
            let handler = GateHandler()
            let worker = StageWorker(
                handler: handler, store: store,
                // A long lease (its own reaper must never take the job back on a slow machine), a quick look for orphans.
                settings: WorkerSettings(concurrency: 2, lease: .seconds(60), block: .milliseconds(100), orphanCheck: .milliseconds(100)),
                logger: testLogger)
            try await Self.submit(store, "T1")
            let orphan = try #require(try await redis.send("LMOVE", store.keys.queue(.verify), store.keys.inflight(member: worker.member), "RIGHT", "LEFT").string)
            let running = Task { try await worker.run() }
            var taken = handler.taken.makeAsyncIterator()
            #expect(await taken.next() == orphan)
            handler.release()
            worker.stop()
            try await running.value
            #expect(handler.results.withLockedValue { $0 } == [.moved])
            #expect(try await redis.send("LLEN", store.keys.queue(.dedupe)) == .integer(1))
            #expect(try await redis.send("LLEN", store.keys.inflight(member: worker.member)) == .integer(0))
        }
    }

    @Test func aGracefulStopHandsUnfinishedJobsBackAndLeavesTheWorkerSet() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: RedisKeys(prefix: "{t}iap"))
            let handler = GateHandler()
            let (worker, running) = Self.start(handler, store, WorkerSettings(concurrency: 2, lease: .milliseconds(30000), shutdownGrace: .milliseconds(0), block: .milliseconds(100)))
            try await Self.submit(store, "T1")
            try await Self.submit(store, "T2")
            var taken = handler.taken.makeAsyncIterator()
            _ = await taken.next()
            _ = await taken.next()
            #expect(try await redis.send("LLEN", store.keys.inflight(member: worker.member)) == .integer(2))
            worker.stop()
            try await running.value
            // The grace period (0 ms) ran out: both jobs are back at the front of the queue, none lost.
            #expect(try await redis.send("LLEN", store.keys.queue(.verify)) == .integer(2))
            #expect(try await redis.send("LLEN", store.keys.inflight(member: worker.member)) == .integer(0))
            #expect(try await redis.send("ZSCORE", store.keys.workers, worker.member) == .null)
            #expect(handler.results.withLockedValue { $0 }.isEmpty)
        }
    }

    @Test func aGracefulStopLetsJobsInFlightFinish() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: RedisKeys(prefix: "{t}iap"))
            let handler = GateHandler()
            let (worker, running) = Self.start(handler, store, WorkerSettings(concurrency: 1, lease: .milliseconds(30000), shutdownGrace: .milliseconds(60_000), block: .milliseconds(100)))
            try await Self.submit(store, "T1")
            var taken = handler.taken.makeAsyncIterator()
            _ = await taken.next()
            worker.stop()
            handler.release()
            try await running.value
            #expect(handler.results.withLockedValue { $0 } == [.moved])
            #expect(try await redis.send("LLEN", store.keys.queue(.dedupe)) == .integer(1))
            #expect(try await redis.send("LLEN", store.keys.queue(.verify)) == .integer(0))
        }
    }
}

extension StageWorkerTests {
    @Test(.timeLimit(.minutes(1)))
    func aWorkerStopsEvenWhileRedisIsAway() async throws {
        try await withClusterNode { redis, server in
            let store = PipelineStore(redis: redis, keys: RedisKeys(prefix: "{t}iap"))
            let (worker, running) = Self.start(GateHandler(), store, WorkerSettings(concurrency: 1, lease: .milliseconds(30000), shutdownGrace: .milliseconds(0), block: .milliseconds(100)))
            server.kill()
            worker.stop()
            // It gives up handing back after a bounded wait instead of hanging on the dead Redis
            // (the time limit fails the test otherwise), and reports no error: the reaper covers it.
            await #expect(throws: Never.self) { try await running.value }
        }
    }
}
