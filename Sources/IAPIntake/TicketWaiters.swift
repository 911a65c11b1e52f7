import Foundation
import PipelineCore
import Logging
import RedisClient
import ServiceLifecycle
import Synchronization

/// The requests waiting for a ticket to change (`GET /v1/receipts/{ticket}?wait=`), served by one
/// subscription to each bucket's results channel (`iap:results` with one bucket) per intake
/// process, fanned out in memory: thousands of waiting clients cost one Redis connection per
/// bucket, and a re-read of their ticket only when it changes.
///
/// A service of the intake's application: it subscribes when the intake starts, re-subscribes
/// (waking every waiter, which re-reads its ticket: messages may have been missed meanwhile) after a
/// Redis failure or a quiet minute, and ends every wait when the intake shuts down.
package final class TicketWaiters: Service, Sendable {
    let redis: RedisConfiguration
    let keys: RedisKeys
    let logger: Logger
    private let state = Mutex(State())

    struct State {
        var waiters: [String: [UUID: AsyncStream<Void>.Continuation]] = [:]
        var stopped = false
        var count = 0
        /// Waiting requests by caller (client key), for the cap per caller.
        var byCaller: [String: Int] = [:]
    }

    /// `keys`: whose buckets' results channels to listen to.
    package init(redis: RedisConfiguration, keys: RedisKeys, logger: Logger) {
        self.redis = redis
        self.keys = keys
        self.logger = logger
    }

    /// A registration: `changes` yields whenever the ticket may have changed; `cancel` ends it.
    package struct Registration: Sendable {
        package let changes: AsyncStream<Void>
        let ticket: String
        let id: UUID
        let caller: String?
    }

    /// Starts listening for `ticket`'s changes. Register before reading the ticket, so a change
    /// between the read and the wait is not missed. `nil` when `caller` has `limit` requests
    /// waiting already (each intake counts its own).
    package func register(_ ticket: String, caller: String? = nil, limit: Int = .max) -> Registration? {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let outcome: Bool? = state.withLock { state in
            if let caller {
                guard state.byCaller[caller, default: 0] < limit else { return nil }
                state.byCaller[caller, default: 0] += 1
            }
            if state.stopped { return true }
            state.waiters[ticket, default: [:]][id] = continuation
            state.count += 1
            return false
        }
        guard let stopped = outcome else { return nil }
        if stopped { continuation.finish() }
        return Registration(changes: stream, ticket: ticket, id: id, caller: caller)
    }

    /// How many requests of `caller` wait now.
    package func waiting(caller: String) -> Int { state.withLock { $0.byCaller[caller, default: 0] } }

    package func cancel(_ registration: Registration) {
        let continuation = state.withLock { state -> AsyncStream<Void>.Continuation? in
            if let caller = registration.caller {
                state.byCaller[caller, default: 1] -= 1
                if state.byCaller[caller] == 0 { state.byCaller[caller] = nil }
            }
            guard let removed = state.waiters[registration.ticket]?.removeValue(forKey: registration.id) else { return nil }
            if state.waiters[registration.ticket]?.isEmpty == true { state.waiters[registration.ticket] = nil }
            state.count -= 1
            return removed
        }
        continuation?.finish()
    }

    /// How many requests wait now.
    package var waiting: Int { state.withLock { $0.count } }

    /// Waits for the next change of the registered ticket; `false` when `deadline` came first or
    /// the intake is stopping.
    package static func next(_ registration: Registration, until deadline: ContinuousClock.Instant) async -> Bool {
        await before(deadline) {
            for await _ in registration.changes { return true }
            return false
        }
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for bucket in self.keys.everyBucket {
                    let channel = bucket.results
                    group.addTask { await self.listen(to: channel) }
                }
            }
        }
        stop()
    }

    /// One channel's subscription, again and again until the intake stops. Whenever it
    /// (re)subscribes, the waiters of its bucket's tickets re-read them.
    private func listen(to channel: String) async {
        var backoff = RedisRetryBackoff()
        while !Task.isCancelled {
            var subscription: RedisSubscription?
            do {
                let current = try await RedisSubscription(configuration: redis, channels: [channel], sharded: true)
                subscription = current
                backoff.reset()
                wakeAll(on: channel)
                while !Task.isCancelled {
                    // A read of the subscription does not notice cancellation: closing it ends the read.
                    let (_, ticket) = try await withTaskCancellationHandler {
                        try await current.next(timeout: .seconds(60))
                    } onCancel: {
                        Task { await current.close() }
                    }
                    wake(ticket)
                }
            } catch {
                if !Task.isCancelled {
                    logger.debug("results subscription ended; subscribing again", metadata: ["error": "\(error)", "channel": "\(channel)"])
                }
            }
            await subscription?.close()
            wakeAll(on: channel)
            if !Task.isCancelled { await backoff.pause() }
        }
    }

    private func wake(_ ticket: String) {
        let continuations = state.withLock { $0.waiters[ticket].map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.yield() }
    }

    private func wakeAll(on channel: String) {
        let continuations = state.withLock { state in
            state.waiters.filter { keys.results(ofTicket: $0.key) == channel }.values.flatMap(\.values)
        }
        for continuation in continuations { continuation.yield() }
    }

    /// Ends every wait (each answers with the ticket as it is) and every later one at once.
    private func stop() {
        let continuations = state.withLock { state in
            state.stopped = true
            return state.waiters.values.flatMap(\.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
