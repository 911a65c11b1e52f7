import Foundation
import PipelineCore
import LoopbackPort
import RedisClient
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Liveness on Redis's clock (issue 38, item 4): a real stage worker run under Debian's
/// libfaketime (what `faketime` preloads; preloaded here so the worker is the process the test
/// holds), its host clock an hour off, heartbeats at Redis's time. One behind is not reaped
/// while it lives; one ahead that dies gives its jobs back within the lease, not an hour later.
@Suite(.serialized) struct WorkerClockTests {
    static let faketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"
    static let lease: Duration = .seconds(60)

    @Test(.enabled(if: FileManager.default.fileExists(atPath: faketime), "needs libfaketime (faketime; workers/deps --tests)"))
    func aLiveWorkerWhoseClockIsBehindKeepsItsPlace() async throws {
        try await withRedis { redis, server in
            let store = PipelineStore(redis: redis, keys: RedisKeys())
            let (exits, exited) = AsyncStream<Void>.makeStream()
            let worker = try Self.granter(server, offset: "-1h", onExit: { _ in exited.finish() })
            defer {
                worker.terminate()
            }
            let (member, beat) = try await Self.firstHeartbeat(redis)
            let now = try await redisTimeMs(redis)
            // Its heartbeat is Redis's now, not its host's, an hour ago.
            #expect(beat <= now && now - beat < Self.lease.milliseconds, "heartbeat \(beat), Redis's now \(now)")
            // A reaper on Redis's clock finds it alive: it stays in the set (an hour-old heartbeat
            // would be past the lease, and past the time a silent worker is forgotten).
            _ = try await store.reapExpiredWorkers(reaper: "test", lease: Self.lease, maxRedeliveries: 3)
            #expect(try await redis.send("ZSCORE", RedisKeys().workers, member) != .null)
            worker.terminate()
            for await _ in exits {}
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: faketime), "needs libfaketime (faketime; workers/deps --tests)"))
    func aDeadWorkerWhoseClockIsAheadGivesItsJobsBackWithinTheLease() async throws {
        try await withRedis { redis, server in
            let keys = RedisKeys()
            let store = PipelineStore(redis: redis, keys: keys)
            let (exits, exited) = AsyncStream<Void>.makeStream()
            let worker = try Self.granter(server, offset: "+1h", onExit: { _ in exited.finish() })
            let (member, beat) = try await Self.firstHeartbeat(redis)
            kill(worker.processIdentifier, SIGKILL)
            for await _ in exits {}
            let now = try await redisTimeMs(redis)
            #expect(beat <= now, "heartbeat \(beat) is ahead of Redis's now \(now)")
            // A job the dead worker held (its ticket gone: it goes back, nothing counts).
            var job = Job(ticket: "T-clock", userID: "u1", receiptData: "eA==", productID: nil, transactionID: nil, enqueuedAt: 1)
            job.stage = .grant
            try await redis.send("LPUSH", keys.inflight(member: member), job.encoded())
            // Inside the lease: it is the dead worker's still.
            #expect(try await store.reapExpiredWorkers(reaper: "test", lease: Self.lease, maxRedeliveries: 3).returned == 0)
            try await redis.send("DEL", keys.reaperLock)
            // Just past the lease on Redis's clock (pinned: the test does not wait a lease out): back
            // in its queue, not an hour later.
            let reaped = try await store.reapExpiredWorkers(
                reaper: "test", lease: Self.lease, maxRedeliveries: 3, now: now + Self.lease.milliseconds + 1)
            #expect(reaped.returned == 1)
            #expect(try await redis.send("LRANGE", keys.queue(.grant), "0", "-1").array?.compactMap(\.string) == [job.encoded()])
        }
    }

    /// `iap-granter` with libfaketime, its clock `offset` from the machine's.
    static func granter(_ server: RedisServer, offset: String, onExit: @escaping @Sendable (Process) -> Void) throws -> Process {
        try IntakeExposureTests.start(
            ["IAP_REDIS_URL": server.url, "IAP_LEASE_MS": String(lease.milliseconds), "LD_PRELOAD": faketime, "FAKETIME": offset],
            executable: "iap-granter", onExit: onExit)
    }

    /// The first worker in `workers` and its heartbeat (another process's write: polled).
    static func firstHeartbeat(_ redis: RedisClient) async throws -> (String, Int64) {
        var found: (String, Int64)?
        try await until("the worker heartbeats") {
            let reply = try await redis.send("ZRANGE", RedisKeys().workers, "0", "0", "WITHSCORES")
            guard let items = reply.array, items.count == 2, let member = items[0].string,
                let score = items[1].string.flatMap({ Int64($0) })
            else { return false }
            found = (member, score)
            return true
        }
        return found!
    }
}
