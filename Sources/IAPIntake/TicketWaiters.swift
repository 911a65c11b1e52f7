import Foundation
import IAPPipeline
import Logging
import RedisClient
import ServiceLifecycle
import Synchronization

/// The requests waiting for a ticket to change (`GET /v1/receipts/{ticket}?wait=`), served by one
/// subscription to `iap:results` per intake process, fanned out in memory: thousands of waiting
/// clients cost one Redis connection, and a re-read of their ticket only when it changes.
///
/// A service of the intake's application: it subscribes when the intake starts, re-subscribes
/// (waking every waiter, which re-reads its ticket: messages may have been missed meanwhile) after a
/// Redis failure or a quiet minute, and ends every wait when the intake shuts down.
public final class TicketWaiters: Service, Sendable {
    let redis: RedisConfiguration
    let channel: String
    let logger: Logger
    private let state = Mutex(State())

    struct State {
        var waiters: [String: [UUID: AsyncStream<Void>.Continuation]] = [:]
        var stopped = false
        var count = 0
    }

    public init(redis: RedisConfiguration, channel: String, logger: Logger) {
        self.redis = redis
        self.channel = channel
        self.logger = logger
    }

    /// A registration: `changes` yields whenever the ticket may have changed; `cancel` ends it.
    public struct Registration: Sendable {
        public let changes: AsyncStream<Void>
        let ticket: String
        let id: UUID
    }

    /// Starts listening for `ticket`'s changes. Register before reading the ticket, so a change
    /// between the read and the wait is not missed.
    public func register(_ ticket: String) -> Registration {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let stopped = state.withLock { state in
            if state.stopped { return true }
            state.waiters[ticket, default: [:]][id] = continuation
            state.count += 1
            return false
        }
        if stopped { continuation.finish() }
        return Registration(changes: stream, ticket: ticket, id: id)
    }

    public func cancel(_ registration: Registration) {
        let continuation = state.withLock { state -> AsyncStream<Void>.Continuation? in
            guard let removed = state.waiters[registration.ticket]?.removeValue(forKey: registration.id) else { return nil }
            if state.waiters[registration.ticket]?.isEmpty == true { state.waiters[registration.ticket] = nil }
            state.count -= 1
            return removed
        }
        continuation?.finish()
    }

    /// How many requests wait now.
    public var waiting: Int { state.withLock { $0.count } }

    /// Waits for the next change of the registered ticket; `false` when `deadline` came first or
    /// the intake is stopping.
    public static func next(_ registration: Registration, until deadline: ContinuousClock.Instant) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in registration.changes { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(until: deadline)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var backoff = RedisRetryBackoff()
            while !Task.isCancelled {
                var subscription: RedisSubscription?
                do {
                    let current = try await RedisSubscription(configuration: self.redis, channels: [self.channel], sharded: true)
                    subscription = current
                    backoff.reset()
                    self.wakeAll()
                    while !Task.isCancelled {
                        // A read of the subscription does not notice cancellation: closing it ends the read.
                        let (_, ticket) = try await withTaskCancellationHandler {
                            try await current.next(timeout: .seconds(60))
                        } onCancel: {
                            Task { await current.close() }
                        }
                        self.wake(ticket)
                    }
                } catch {
                    if !Task.isCancelled {
                        self.logger.debug("results subscription ended; subscribing again", metadata: ["error": "\(error)"])
                    }
                }
                await subscription?.close()
                self.wakeAll()
                if !Task.isCancelled { await backoff.pause() }
            }
        }
        stop()
    }

    private func wake(_ ticket: String) {
        let continuations = state.withLock { $0.waiters[ticket].map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.yield() }
    }

    private func wakeAll() {
        let continuations = state.withLock { $0.waiters.values.flatMap(\.values) }
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
