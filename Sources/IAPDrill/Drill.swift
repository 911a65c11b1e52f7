import AppleSimulator
import AsyncHTTPClient
import ClusterHarness
import Foundation
import PipelineCore
import IAPStages
import IAPOperations
import NIOConcurrencyHelpers
import RedisClient

/// The fault drill: per trial, a fresh pipeline of real processes takes a stream of receipts while
/// faults are injected; then it drains and its books are checked.
public struct Drill: Sendable {
    public let settings: DrillSettings
    /// Where progress lines go (the table is the caller's to print).
    public let progress: @Sendable (String) -> Void

    public init(settings: DrillSettings, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.settings = settings
        self.progress = progress
    }

    public func run() async throws -> [TrialReport] {
        try settings.cluster.checkExecutables()
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(timeout: .init(connect: .seconds(2))))
        var reports: [TrialReport] = []
        do {
            for trial in 1...settings.trials {
                let report = try await runTrial(trial, http: http)
                progress(
                    "trial \(trial): \(report.passed ? "ok" : "FAILED"): lost \(report.lost), double grants \(report.doubleGrants), "
                        + "stuck \(report.stuck), wrong \(report.wrongOutcomes), anomalies \(report.anomalies), "
                        + "drained in \(String(format: "%.1f", report.drainSeconds)) s")
                reports.append(report)
            }
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        return reports
    }

    /// Has apple-sim deliver a REFUND notification as often as planned (one UUID, as Apple's
    /// retries), again (as Apple does) until the intake has answered 200 once: a kill or an
    /// outage may refuse it.
    func deliverRefund(_ receipt: PlannedReceipt, to cluster: LocalCluster) async throws {
        guard let refund = receipt.refund, let unit = receipt.unit else { return }
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            let statuses = (try? await cluster.deliverNotification(type: "REFUND", transactionID: unit, times: refund.times)) ?? []
            if statuses.contains(200) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw DrillError("the REFUND of \(unit) was never accepted")
    }

    func runTrial(_ trial: Int, http: HTTPClient) async throws -> TrialReport {
        // Each trial draws from its own generator, so trial N is the same whatever ran before it.
        var rng = SeededGenerator(seed: settings.seed &+ UInt64(trial) &* 0x1000_0000_01B3)
        var plan = PlannedReceipt.plan(count: settings.receiptsPerTrial, trial: trial, using: &rng)
        let directory = settings.workDirectory.appendingPathComponent("trial-\(trial)")
        try? FileManager.default.removeItem(at: directory)
        // The game backend's webhook, when the trial runs iap-webhook.
        let sink = settings.webhooks ? WebhookSink(failureRate: settings.webhookFailureRate) : nil
        var clusterSettings = settings.cluster
        if let sink {
            clusterSettings.environment["IAP_WEBHOOK_URL"] = try await sink.start()
            clusterSettings.environment["IAP_WEBHOOK_SECRET"] = WebhookSink.secret
        }
        defer { if let sink { Task { await sink.stop() } } }
        let cluster = try LocalCluster(settings: clusterSettings, directory: directory, http: http)
        do {
            try await cluster.start()
        } catch {
            _ = await cluster.stop()
            throw error
        }
        progress("trial \(trial): \(plan.count) receipts, redis \(cluster.redisURL), logs in \(directory.path)/logs")
        do {
            // apple-sim sends as Apple does, to the intake, with its retries compressed.
            try await cluster.setNotificationDelivery(
                url: cluster.intakeURL + "/v1/notifications/apple", retryDelaysMs: DrillSettings.notificationRetryDelaysMs)
        } catch {
            _ = await cluster.stop()
            throw error
        }
        let refunds = plan.filter { $0.refund != nil }
        var subscriptions = PlannedSubscription.plan(
            count: settings.subscriptionsPerTrial, trial: trial, intakeURL: cluster.intakeURL, using: &rng)
        do {
            try await plan.resolve(with: cluster)
            // Refunds Apple sends before the client reports the purchase.
            for receipt in refunds where receipt.refund!.beforeSubmission { try await deliverRefund(receipt, to: cluster) }
        } catch {
            _ = await cluster.stop()
            throw error
        }

        let finished = NIOLockedValueBox(false)
        let injector = Task { [settings, rng] in
            var injector = FaultInjector(cluster: cluster, settings: settings, rng: rng)
            try await injector.run(until: finished)
            return injector
        }
        let client = cluster.loadClient(http)
        // The subscribers buy and send their first period; apple-sim renews the rest while the faults run.
        let subscriptionStart = Int64(Date().timeIntervalSince1970 * 1000)
        do {
            for index in subscriptions.indices {
                subscriptions[index].plan.start = subscriptionStart
                subscriptions[index].receiptData = try await cluster.startSubscription(subscriptions[index].plan)
            }
        } catch {
            injector.cancel()
            _ = await cluster.stop()
            throw error
        }
        var outageError: (any Error)?
        let longOutage = settings.appleOutage > .zero ? Task { [settings, progress] in
            try await Self.longAppleOutage(cluster, settings, progress: progress)
        } : nil
        let subscribed = await client.submitAll(subscriptions, perSecond: nil, concurrency: 4)
        let submissions = await client.submitAll(plan, perSecond: settings.submitRate, concurrency: settings.clientConcurrency)
        // The long outage runs its whole length before the faults end (healing ends any outage).
        if let longOutage {
            do { try await longOutage.value } catch { outageError = error }
        }
        // Refunds that come after the submission, while its grant may still be in flight and faults
        // still run: sent as Apple sends (retried, then only in its history: the sweep's to find).
        // With the notification-outage fault, these meet one for sure: the intake refuses every
        // delivery until apple-sim's retries are spent, and only the sweep can bring them in.
        var refundError: (any Error)? = outageError
        let outage = settings.faults.contains(.notificationOutage) && refunds.contains { !$0.refund!.beforeSubmission }
        if outage {
            do { try await cluster.beginNotificationOutage() } catch { refundError = error }
        }
        for receipt in refunds where !receipt.refund!.beforeSubmission {
            do {
                if receipt.refund!.times == 0 {
                    try await cluster.refundSilently(transactionID: receipt.unit!)
                } else {
                    try await cluster.sendNotification(type: "REFUND", transactionID: receipt.unit!, times: receipt.refund!.times)
                }
            } catch {
                refundError = error
            }
        }
        if outage {
            try? await Task.sleep(for: .milliseconds(DrillSettings.notificationRetryDelaysMs.reduce(0, +) + 1500))
            do { try await cluster.endNotificationOutage() } catch { refundError = error }
            let refundsSent = (try? await cluster.sentNotifications())?.filter { $0.type == "REFUND" } ?? []
            progress("trial \(trial): refunds Apple could not deliver through the notification outage: \(refundsSent.filter { !$0.delivered }.count) of \(refundsSent.count)")
        }
        // Faults go on until every subscription has had its last period and its end.
        if let end = subscriptions.map(\.endsAt).max() {
            let wait = end + 1000 - Int64(Date().timeIntervalSince1970 * 1000)
            if wait > 0 { try? await Task.sleep(for: .milliseconds(wait)) }
        }
        finished.withLockedValue { $0 = true }
        let faults: FaultInjector
        do {
            faults = try await injector.value
            if let refundError { throw refundError }
            try await cluster.heal()
        } catch {
            _ = await cluster.stop()
            throw error
        }

        let redis = RedisClient(configuration: try RedisConfiguration(url: cluster.redisURL), poolSize: 2)
        let audit = TrialAudit(store: PipelineStore(redis: redis, keys: cluster.keys), lease: settings.lease)
        let tickets = submissions.map(\.ticket)
        var (terminal, seconds) = await audit.drain(
            Set((tickets + subscribed.map(\.ticket)).compactMap { $0 }), timeout: .seconds(settings.drainTimeoutSeconds))
        // Every notification Apple sent is stored (some only by the sweep), then applied.
        let notificationBooks: NotificationAudit.Books
        do {
            notificationBooks = try await NotificationAudit(store: audit.store).settle(cluster, timeout: .seconds(60))
        } catch {
            await redis.close()
            _ = await cluster.stop()
            throw error
        }
        // Refunds Apple never notified: the notifiers' refund sweep must find each one in Get Refund History.
        let silent = refunds.filter { $0.refund!.times == 0 }.compactMap(\.unit)
        if !silent.isEmpty {
            let found = await audit.awaitRevoked(silent, timeout: .seconds(180))
            progress("trial \(trial): refunds Apple never notified, taken back by the refund sweep: \(found) of \(silent.count)")
        }
        seconds += await audit.drain([], timeout: .seconds(settings.drainTimeoutSeconds)).seconds
        let subscriptionAudit = SubscriptionAudit(store: audit.store, lease: settings.lease)
        let settled = await subscriptionAudit.settle(subscriptions, timeout: .seconds(60))
        var subscriptionBooks = SubscriptionAudit.Books()
        var webhookBooks = WebhookAudit.Books()
        var books: TrialAudit.Books
        let failovers: [FailoverTiming]
        do {
            let (released, findings) = try await audit.releaseHeld(&terminal)
            // Every event, the releases' included, reaches the webhook before the books are read.
            let webhookAudit = WebhookAudit(store: audit.store, lease: settings.lease)
            if let sink {
                let settledHooks = await webhookAudit.settle(sink, timeout: .seconds(60))
                webhookBooks = try await webhookAudit.check(sink)
                if !settledHooks { webhookBooks.note("the webhook deliveries never settled in 60 s") }
            }
            books = try await audit.check(plan: plan, tickets: tickets, terminal: terminal)
            books.wrong += findings.count
            for finding in findings { books.note(finding) }
            if released != books.held {
                books.wrong += 1
                books.note("wrong: released \(released) held purchases, the capped ones account for \(books.held)")
            }
            failovers = try await audit.timings(of: faults.failovers)
            subscriptionBooks = try await subscriptionAudit.check(subscriptions)
            if let settled { subscriptionBooks.note("the subscriptions never settled in 60 s: \(settled)") }
            books.lost += subscriptionBooks.lost + webhookBooks.lost + notificationBooks.missing.count
            for missing in notificationBooks.missing.prefix(5) { books.note("lost: a notification never stored: \(missing)") }
            books.wrong += webhookBooks.wrong
            for finding in webhookBooks.findings { books.note(finding) }
            books.wrong += subscriptionBooks.wrong + (settled == nil ? 0 : 1)
            for finding in subscriptionBooks.findings { books.note(finding) }
        } catch {
            await redis.close()
            _ = await cluster.stop()
            throw error
        }
        await redis.close()

        var anomalies = faults.anomalies + (await cluster.crashes())
        anomalies += await cluster.stop()
        for (receipt, submission) in zip(plan, submissions) where submission.error != nil {
            anomalies.append("receipt #\(receipt.index) (\(receipt.scenario.rawValue)) not accepted: \(submission.error!)")
        }
        for (subscription, submission) in zip(subscriptions, subscribed) where submission.error != nil {
            anomalies.append("subscription \(subscription.originalTransactionID) not accepted: \(submission.error!)")
        }
        var report = TrialReport(
            trial: trial, receipts: plan.count, accepted: Set(tickets.compactMap { $0 }).count,
            refusals: submissions.map(\.refusals).reduce(0, +), faults: faults.injected,
            jobsHeldAtSigterm: faults.jobsHeldAtSigterm,
            storeKit: plan.filter { $0.transaction != nil && $0.sameTicketAs == nil }.count,
            refundsRevoked: books.refundsRevoked, refundsBeforeGrant: books.refundsBeforeGrant, held: books.held,
            subscriptions: subscriptions.count, periods: subscriptionBooks.periods,
            webhookDelivered: webhookBooks.delivered, webhookRedelivered: webhookBooks.redelivered,
            failovers: failovers, reshards: faults.reshards, poisonPushed: faults.poisonPushed, poisonDeadLettered: books.poisonDeadLettered,
            lost: books.lost, doubleGrants: books.doubleGrants, stuck: books.stuck, wrongOutcomes: books.wrong,
            anomalies: anomalies.count, drainSeconds: seconds, examples: books.examples + anomalies.prefix(5))
        report.notificationsSent = notificationBooks.sent
        report.notificationsUndelivered = notificationBooks.undelivered
        return report
    }

    /// A third into the submission, verifyReceipt answers 503 for `settings.appleOutage`; returns
    /// once it is over and the breaker closed again (or a minute after), having said how long the
    /// fleet's breaker took to open and, once Apple answered again, to close (its hash, read every
    /// 100 ms; Redis may be down a moment under the other faults: such reads are skipped).
    static func longAppleOutage(
        _ cluster: LocalCluster, _ settings: DrillSettings, progress: @Sendable (String) -> Void
    ) async throws {
        let submitting = Double(settings.receiptsPerTrial) / Double(max(settings.submitRate, 1))
        try await Task.sleep(for: .seconds(submitting / 3))
        let length = settings.appleOutage
        let redis = RedisClient(configuration: try RedisConfiguration(url: cluster.redisURL), poolSize: 1)
        defer { Task { await redis.close() } }
        let store = PipelineStore(redis: redis, keys: cluster.keys)
        func breaker() async -> [String: String]? { try? await store.appleBreakerState(.verifyReceipt) }
        let openingsBefore = Int(await breaker()?["openings"] ?? "0") ?? 0
        progress("apple-sim: verifyReceipt down for \(length.components.seconds) s")
        let started = ContinuousClock.now
        try await cluster.appleOutage(SimulatedOutage(mode: .unavailable, durationMs: Int(length.milliseconds)))
        var opened: Duration?
        while ContinuousClock.now - started < length {
            if opened == nil, let state = await breaker(), Int(state["openings"] ?? "0") ?? 0 > openingsBefore {
                opened = ContinuousClock.now - started
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let ended = ContinuousClock.now
        var closed: Duration?
        while closed == nil && ContinuousClock.now - ended < .seconds(60) {
            if let state = await breaker(), state["opened_at"] == nil { closed = ContinuousClock.now - ended }
            if closed == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        func seconds(_ duration: Duration?) -> String { duration.map { String(format: "%.1f s", Double($0.milliseconds) / 1000) } ?? "never" }
        progress("apple-sim: verifyReceipt answers again; the breaker opened \(seconds(opened)) into the outage, "
            + "closed \(seconds(closed)) after it ended")
    }
}
