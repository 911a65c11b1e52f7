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
/// A service of the intake's application. A channel is subscribed to only while requests wait on
/// its tickets, and for `linger` after the last one left: an intake nobody waits on reads none of
/// the results every receipt publishes (that reading was a twentieth of its CPU). It subscribes
/// when a first request waits, re-subscribes after a Redis failure or a quiet `linger` (at most a
/// minute), and each time wakes every waiter of the channel, which re-reads its ticket: messages
/// may have been missed meanwhile, and a waiter registers before it reads its ticket, so a change
/// before the subscription is never lost. It ends every wait when the intake shuts down.
package final class TicketWaiters: Service, Sendable {
    let redis: RedisConfiguration
    let keys: RedisKeys
    let logger: Logger
    /// How long a channel's subscription outlives its last waiter.
    let linger: Duration
    private let state = Mutex(State())
    /// Per channel: signalled when a request starts waiting on one of its tickets.
    private let demand: [String: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)]

    struct State {
        var waiters: [String: [UUID: AsyncStream<Void>.Continuation]] = [:]
        var stopped = false
        var count = 0
        /// Waiting requests by caller (client key), for the cap per caller.
        var byCaller: [String: Int] = [:]
        /// Waiting requests by results channel, and when each channel's last one left.
        var byChannel: [String: Int] = [:]
        var lastLeft: [String: ContinuousClock.Instant] = [:]
    }

    /// `keys`: whose buckets' results channels to listen to.
    package init(redis: RedisConfiguration, keys: RedisKeys, logger: Logger, linger: Duration = .seconds(60)) {
        self.redis = redis
        self.keys = keys
        self.logger = logger
        self.linger = linger
        demand = Dictionary(uniqueKeysWithValues: keys.everyBucket.map { bucket in
            (bucket.results, AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1)))
        })
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
        let channel = keys.results(ofTicket: ticket)
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let outcome: Bool? = state.withLock { state in
            if let caller {
                guard state.byCaller[caller, default: 0] < limit else { return nil }
                state.byCaller[caller, default: 0] += 1
            }
            if state.stopped { return true }
            state.waiters[ticket, default: [:]][id] = continuation
            state.count += 1
            state.byChannel[channel, default: 0] += 1
            return false
        }
        guard let stopped = outcome else { return nil }
        if stopped { continuation.finish() }
        demand[channel]?.continuation.yield()
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
            let channel = keys.results(ofTicket: registration.ticket)
            state.byChannel[channel, default: 1] -= 1
            if state.byChannel[channel] == 0 {
                state.byChannel[channel] = nil
                state.lastLeft[channel] = .now
            }
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

    /// One channel, until the intake stops: subscribed while requests wait on it (and `linger`
    /// after), idle otherwise.
    private func listen(to channel: String) async {
        guard let demand = demand[channel]?.stream else { return }
        var backoff = RedisRetryBackoff()
        for await _ in demand where !isIdle(channel) {
            await subscribe(to: channel, &backoff)
        }
    }

    /// Subscribes to `channel` again and again (waking its waiters each time) until nobody has
    /// waited on it for `linger`, or the intake stops.
    private func subscribe(to channel: String, _ backoff: inout RedisRetryBackoff) async {
        // A quiet subscription is renewed: a connection that died unnoticed ends within this.
        let quiet = min(linger, .seconds(60))
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
                        try await current.next(timeout: quiet)
                    } onCancel: {
                        Task { await current.close() }
                    }
                    wake(ticket)
                    if isIdle(channel) { break }
                }
            } catch {
                if !Task.isCancelled, !isIdle(channel) {
                    logger.debug("results subscription ended; subscribing again", metadata: ["error": "\(error)", "channel": "\(channel)"])
                }
            }
            await subscription?.close()
            wakeAll(on: channel)
            if isIdle(channel) { return }
            if !Task.isCancelled { await backoff.pause() }
        }
    }

    /// Nobody waits on `channel`, and nobody has for `linger`.
    private func isIdle(_ channel: String) -> Bool {
        state.withLock { state in
            state.byChannel[channel] == nil && state.lastLeft[channel].map { ContinuousClock.now - $0 >= linger } ?? true
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
