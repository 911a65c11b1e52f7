import AppStoreServerAPI
import Foundation
import IAPSettings
import IAPStages
import Logging
import PipelineCore
import RedisClient
import ServiceLifecycle

/// The standing refund sweep (`IAP_REFUND_SWEEP_S`), a service of every notifier; one process of
/// the fleet sweeps at a time (the notification sweep's lease, on `refund-sweep`). Every period it
/// adds the customers of the grants, renewals and releases the fulfilment streams gained since its
/// cursors to `refund-customers` (user → their latest purchase), drops those whose latest is older
/// than 90 days, and asks Get Refund History about each (from the revision kept for it: only what
/// is new), taking back what Apple refunded and nobody reported (`RefundHistoryAudit`, `apply`).
///
/// Refund History is its own endpoint in Apple's limits and in the fleet's budget, so the sweep
/// never takes a permit verification needs; it also paces itself to a tenth of
/// `IAP_APPLE_API_MAX_RPS` (at least one a second), so it leaves room for the support desk too.
package struct RefundSweeper: Service {
    package let audit: RefundHistoryAudit
    package let store: PipelineStore
    package let schedule: LeasedSweep
    package var period: Duration { schedule.period }
    /// Customers asked a second at most.
    package let asksPerSecond: Int
    package let logger: Logger
    var owner: String { schedule.owner }
    var lease: Duration { schedule.lease }

    /// Entries this recent are left for the next sweep: an entry's id is its step's Redis time, so
    /// everything older is settled.
    package let settle: Duration

    package init(
        audit: RefundHistoryAudit, store: PipelineStore, period: Duration, asksPerSecond: Int, settle: Duration = .seconds(5),
        logger: Logger
    ) {
        self.audit = audit
        self.settle = settle
        self.store = store
        self.schedule = LeasedSweep(period: period)
        self.asksPerSecond = max(asksPerSecond, 1)
        self.logger = logger
    }

    /// How long after their latest purchase a customer is still asked (Apple refunds within 90 days).
    package static let window: Duration = .seconds(90 * 86400)

    package func run() async throws {
        await schedule.run {
            switch await turn() {
            case .swept(let report): .swept(complete: report.complete)
            case .waited: .waited
            case .failed: .failed
            }
        }
    }

    /// What one sweep did.
    package struct Report: Sendable, Equatable {
        package var customers = 0
        package var dropped = 0
        package var asked = 0
        /// Refunds queued to be taken back.
        package var revoked = 0
        package var complete = true
        package var error: String?
    }

    package enum Turn: Sendable, Equatable {
        case swept(Report)
        case waited
        case failed(String)
    }

    /// One look: claims the sweep when due and free, updates the customers, asks Apple, finishes.
    package func turn() async -> Turn {
        let (now, cursors): (Int64, [String: Int64])
        switch await schedule.claim("refund sweep", logger: logger, by: { try await store.claimRefundSweep(owner: $0, lease: $1) }) {
        case .success(let claimed): (now, cursors) = claimed
        case .failure(.waited): return .waited
        case .failure(.failed(let error)): return .failed(error)
        }
        var report = Report()
        var reached: [String: Int64] = [:]
        do {
            reached = try await collectCustomers(now: now, cursors: cursors)
            try await ask(now: now, report: &report)
        } catch {
            report.complete = false
            report.error = "\(error)"
        }
        if report.revoked > 0 || !report.complete {
            logger.notice("refund sweep", metadata: [
                "asked": "\(report.asked)", "revoked": "\(report.revoked)", "complete": "\(report.complete)",
                "error": "\(report.error ?? "")",
            ])
        }
        do {
            try await store.finishRefundSweep(
                owner: owner, nextIn: schedule.wait(after: .swept(complete: report.complete)), cursors: report.complete ? reached : [:],
                asked: report.asked, revoked: report.revoked, error: report.error)
        } catch {
            logger.warning("cannot finish the refund sweep", metadata: ["error": "\(error)"])
        }
        return .swept(report)
    }

    /// Reads each bucket's stream from its cursor (a first sweep: 90 days back) to a few seconds
    /// ago and records each user's latest purchase; returns where each bucket was read up to.
    func collectCustomers(now: Int64, cursors: [String: Int64]) async throws -> [String: Int64] {
        let until = now - settle.milliseconds
        var latest: [String: (at: Int64, original: String)] = [:]
        var reached: [String: Int64] = [:]
        for (index, bucket) in store.keys.everyBucket.enumerated() {
            let name = "b\(index)"
            var start = "\(cursors[name] ?? (now - Self.window.milliseconds))"
            while true {
                let page = try await store.redis.send("XRANGE", bucket.fulfilment, start, "\(until)", "COUNT", "1000")
                if case .error(let message) = page { throw RedisError.server(message) }
                let entries = page.array ?? []
                for entry in entries {
                    guard let parts = entry.array, parts.count == 2, let id = parts[0].string else { continue }
                    start = "(" + id
                    let fields = parts[1].stringDictionary
                    guard ["granted", "renewed", "released", "adopted"].contains(fields["event"] ?? ""), let user = fields["user_id"], !user.isEmpty,
                          let original = fields["original_transaction_id"], !original.isEmpty,
                          let at = id.split(separator: "-").first.flatMap({ Int64($0) })
                    else { continue }
                    if (latest[user]?.at ?? .min) <= at { latest[user] = (at, original) }
                }
                if entries.count < 1000 { break }
            }
            reached[name] = until + 1
        }
        if !latest.isEmpty {
            let known = try await store.redis.pipeline(latest.keys.sorted().map { RedisCommand("HGET", store.keys.refundCustomers, $0) })
            var updates: [String] = []
            for ((user, purchase), reply) in zip(latest.sorted(by: { $0.key < $1.key }), known) {
                let before = reply.string.flatMap { $0.split(separator: ":").first.flatMap { Int64($0) } } ?? .min
                if purchase.at >= before { updates += [user, "\(purchase.at):\(purchase.original)"] }
            }
            for chunk in stride(from: 0, to: updates.count, by: 200) {
                let reply = try await store.redis.send(RedisCommand(["HSET", store.keys.refundCustomers] + updates[chunk..<min(chunk + 200, updates.count)]))
                if case .error(let message) = reply { throw RedisError.server(message) }
            }
        }
        return reached
    }

    /// Asks Apple about every customer still in the window, paced, renewing the lease as it goes.
    func ask(now: Int64, report: inout Report) async throws {
        var cursor = "0"
        let oldest = now - Self.window.milliseconds
        let pause = Duration.seconds(1) / asksPerSecond
        repeat {
            let reply = try await store.redis.send("HSCAN", store.keys.refundCustomers, cursor, "COUNT", "200")
            guard let parts = reply.array, parts.count == 2, let next = parts[0].string, let flat = parts[1].array else {
                throw RedisError.server("HSCAN answered \(reply)")
            }
            cursor = next
            for pair in stride(from: 0, to: flat.count - 1, by: 2) {
                guard let user = flat[pair].string, let value = flat[pair + 1].string else { continue }
                let split = value.split(separator: ":", maxSplits: 1)
                guard split.count == 2, let at = Int64(split[0]) else { continue }
                report.customers += 1
                if at < oldest {
                    _ = try await store.redis.send("HDEL", store.keys.refundCustomers, user)
                    report.dropped += 1
                    continue
                }
                guard try await store.claimRefundSweep(owner: owner, lease: lease, renew: true) != .lost else {
                    throw SweepLeaseLost()
                }
                let started = ContinuousClock.now
                let found = await audit.audit(transactionIDs: [String(split[1])], apply: true, fromLastRevision: true, logger: logger)
                report.asked += 1
                report.revoked += found.refunds.filter { $0.action == "revoking" }.count
                if !found.complete {
                    report.complete = false
                    report.error = found.error
                }
                let spent = ContinuousClock.now - started
                if spent < pause { try await Task.sleep(for: pause - spent) }
            }
        } while cursor != "0"
    }

    struct SweepLeaseLost: Error, CustomStringConvertible {
        var description: String { "another process took over the refund sweep" }
    }
}

extension RefundSweeper {
    /// The sweep a notifier runs with these settings: `nil` when `IAP_REFUND_SWEEP_S` is 0 or
    /// without the Server API key (said in the log). Its clients are shut down by the caller (`audit.clients`).
    package static func make(_ configuration: PipelineConfiguration, store: PipelineStore, logger: Logger) throws(ConfigurationError) -> RefundSweeper? {
        guard configuration.sweeps.refunds > .zero else { return nil }
        guard let audit = try RefundHistoryAudit.make(configuration, store: store, logger: logger) else {
            logger.warning("the refund sweep is off: it needs the App Store Server API key (IAP_APPLE_API_*)")
            return nil
        }
        return RefundSweeper(
            audit: audit, store: store, period: configuration.sweeps.refunds, asksPerSecond: configuration.serverAPI.maxRPS / 10, logger: logger)
    }
}
