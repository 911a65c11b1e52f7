import AsyncHTTPClient
import ClusterHarness
import Foundation
import NIOConcurrencyHelpers
import PipelineCore
import PlainJSON
import RedisClient

/// One trial, in its phases: a pipeline started, the load and the faults, the late refunds, the
/// drain, the books.
extension Drill {
    func runTrial(_ trial: Int, http: HTTPClient) async throws -> TrialReport {
        // Each trial draws from its own generator, so trial N is the same whatever ran before it.
        var rng = SeededGenerator(seed: settings.seed &+ UInt64(trial) &* 0x1000_0000_01B3)
        var plan = PlannedReceipt.plan(count: settings.receiptsPerTrial, trial: trial, using: &rng)
        let directory = settings.workDirectory.appendingPathComponent("trial-\(trial)")
        try? FileManager.default.removeItem(at: directory)
        // The webhook destinations (the game backend, an analytics tool), when the trial runs iap-webhook.
        let sinks = settings.webhooks ? WebhookSink.destinations(failureRate: settings.webhookFailureRate) : []
        defer { for sink in sinks { Task { await sink.stop() } } }
        let cluster = try await startCluster(directory: directory, sinks: sinks, http: http)
        progress("trial \(trial): \(plan.count) receipts, redis \(cluster.redisURL), logs in \(directory.path)/logs")
        let refunds = plan.filter { $0.refund != nil }
        var subscriptions = PlannedSubscription.plan(
            count: settings.subscriptionsPerTrial, trial: trial, intakeURL: cluster.intakeURL, using: &rng)
        let adoption = PlannedAdoption.plan(count: settings.adoptionPlayers, trial: trial)
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
        do {
            try await startSubscriptions(&subscriptions, on: cluster)
            try await startAdoption(adoption, on: cluster)
        } catch {
            injector.cancel()
            _ = await cluster.stop()
            throw error
        }
        let client = cluster.loadClient(http)
        let longOutage = settings.appleOutage > .zero ? Task { [settings, progress] in
            try await Self.longAppleOutage(cluster, settings, progress: progress)
        } : nil
        let adopting = Task { try await runAdoption(adoption, on: cluster) }
        let subscribed = await client.submitAll(subscriptions, perSecond: nil, concurrency: 4)
        let submissions = await client.submitAll(plan, perSecond: settings.submitRate, concurrency: settings.clientConcurrency)
        let adopted: (tickets: [String: String], findings: [String])
        do { adopted = try await adopting.value } catch { adopted = ([:], ["wrong: the adoption trial failed: \(error)"]) }
        // The long outage runs its whole length before the faults end (healing ends any outage).
        var outageError: (any Error)?
        if let longOutage {
            do { try await longOutage.value } catch { outageError = error }
        }
        let refundError = await sendLateRefunds(refunds, to: cluster, trial: trial) ?? outageError
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
        let load = TrialLoad(
            plan: plan, refunds: refunds, subscriptions: subscriptions, submissions: submissions, subscribed: subscribed, faults: faults,
            adoption: adoption, adopted: adopted)
        return try await audit(load, trial: trial, cluster: cluster, sinks: sinks)
    }

    /// What a trial sent and did, for its audit.
    struct TrialLoad {
        var plan: [PlannedReceipt]
        var refunds: [PlannedReceipt]
        var subscriptions: [PlannedSubscription]
        var submissions: [LoadClient.Submission]
        var subscribed: [LoadClient.Submission]
        var faults: FaultInjector
        var adoption: PlannedAdoption
        /// The adoption's sync tickets, and what its import found wrong.
        var adopted: (tickets: [String: String], findings: [String])
    }

    /// A fresh pipeline (with the webhook destinations' addresses: the first as `IAP_WEBHOOK_URL`,
    /// the others in `IAP_WEBHOOKS_FILE`), and apple-sim sending notifications to it as Apple
    /// does, with its retries compressed.
    private func startCluster(directory: URL, sinks: [WebhookSink], http: HTTPClient) async throws -> LocalCluster {
        var clusterSettings = settings.cluster
        var others: JSONObject = [:]
        for sink in sinks {
            let url = try await sink.start()
            guard sink.name != RedisKeys.defaultWebhookDestination else {
                clusterSettings.environment["IAP_WEBHOOK_URL"] = url
                clusterSettings.environment["IAP_WEBHOOK_SECRET"] = sink.secret
                continue
            }
            others[sink.name] = .members([
                "url": .string(url), "secret": .string(sink.secret), "events": sink.filter.events.map { .array($0.map(JSONValue.string)) },
            ])
        }
        if !others.isEmpty {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = directory.appendingPathComponent("webhooks.json")
            try Data(JSONValue.object(others).canonicalText.utf8).write(to: file)
            clusterSettings.environment["IAP_WEBHOOKS_FILE"] = file.path
        }
        let cluster = try LocalCluster(settings: clusterSettings, directory: directory, http: http)
        do {
            try await cluster.start()
            try await cluster.setNotificationDelivery(
                url: cluster.intakeURL + "/v1/notifications/apple", retryDelaysMs: DrillSettings.notificationRetryDelaysMs)
        } catch {
            _ = await cluster.stop()
            throw error
        }
        return cluster
    }

    /// The subscribers buy and send their first period; apple-sim renews the rest while the faults run.
    private func startSubscriptions(_ subscriptions: inout [PlannedSubscription], on cluster: LocalCluster) async throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000)
        for index in subscriptions.indices {
            subscriptions[index].plan.start = start
            subscriptions[index].receiptData = try await cluster.startSubscription(subscriptions[index].plan)
        }
    }

    /// Refunds that come after the submission, while its grant may still be in flight and faults
    /// still run: sent as Apple sends (retried, then only in its history: the sweep's to find).
    /// With the notification-outage fault, these meet one for sure: the intake refuses every
    /// delivery until apple-sim's retries are spent, and only the sweep can bring them in.
    /// Returns the last error met, if any.
    private func sendLateRefunds(_ refunds: [PlannedReceipt], to cluster: LocalCluster, trial: Int) async -> (any Error)? {
        var refundError: (any Error)?
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
        return refundError
    }

    /// The drain and the books, then the trial's report; the pipeline is stopped whatever happens.
    private func audit(_ load: TrialLoad, trial: Int, cluster: LocalCluster, sinks: [WebhookSink]) async throws -> TrialReport {
        let redis = RedisClient(configuration: try RedisConfiguration(url: cluster.redisURL), poolSize: 2)
        let audit = TrialAudit(store: PipelineStore(redis: redis, keys: cluster.keys), lease: settings.lease)
        let tickets = load.submissions.map(\.ticket)
        var (terminal, seconds) = await audit.drain(
            Set((tickets + load.subscribed.map(\.ticket) + load.adopted.tickets.values.map(Optional.some)).compactMap { $0 }),
            timeout: .seconds(settings.drainTimeoutSeconds))
        var read: TrialBooks
        do {
            // Every notification Apple sent is stored (some only by the sweep), then applied.
            let notificationBooks = try await NotificationAudit(store: audit.store).settle(cluster, timeout: .seconds(60))
            // Refunds Apple never notified: the notifiers' refund sweep must find each one in Get Refund History.
            let silent = load.refunds.filter { $0.refund!.times == 0 }.compactMap(\.unit)
            if !silent.isEmpty {
                let found = await audit.awaitRevoked(silent, timeout: .seconds(180))
                progress("trial \(trial): refunds Apple never notified, taken back by the refund sweep: \(found) of \(silent.count)")
            }
            seconds += await audit.drain([], timeout: .seconds(settings.drainTimeoutSeconds)).seconds
            read = try await readBooks(load, audit: audit, terminal: &terminal, sinks: sinks, notifications: notificationBooks)
            try await recountFigures(audit.store, trial: trial, into: &read.books)
            let adoption = try await auditAdoption(load.adoption, syncs: load.adopted.tickets, store: audit.store)
            read.books.lost += adoption.lost
            read.books.doubleGrants += adoption.double
            read.books.wrong += load.adopted.findings.count
            read.grantedBeforeCutover = adoption.grantedBeforeCutover
            for note in load.adopted.findings + adoption.notes { read.books.note(note) }
        } catch {
            await redis.close()
            _ = await cluster.stop()
            throw error
        }
        await redis.close()
        var anomalies = load.faults.anomalies + (await cluster.crashes())
        anomalies += await cluster.stop()
        for (receipt, submission) in zip(load.plan, load.submissions) where submission.error != nil {
            anomalies.append("receipt #\(receipt.index) (\(receipt.scenario.rawValue)) not accepted: \(submission.error!)")
        }
        for (subscription, submission) in zip(load.subscriptions, load.subscribed) where submission.error != nil {
            anomalies.append("subscription \(subscription.originalTransactionID) not accepted: \(submission.error!)")
        }
        return report(load, trial: trial, books: read, anomalies: anomalies, drainSeconds: seconds)
    }

    /// The business's figures of the trial's days (today's, and the last hour's day: a trial
    /// that ran over midnight) rebuilt from the grant records: each figure that differs from what
    /// was counted with the events through the trial's kills, failovers and reshards is wrong.
    private func recountFigures(_ store: PipelineStore, trial: Int, into books: inout TrialAudit.Books) async throws {
        let now = currentTimeMs()
        for day in Set([FigureDay(milliseconds: now - 3_600_000), FigureDay(milliseconds: now)]).sorted() {
            let recount = try await store.recountFigures(day: day)
            progress("trial \(trial): figures of \(day) recounted from \(recount.recordsRead) grant records: "
                + "\(recount.compared) compared, \(recount.differences.count) differ")
            books.wrong += recount.differences.count
            for difference in recount.differences {
                books.note("wrong: \(day)'s figure \(difference.field) is \(difference.live), the grant records say \(difference.records)")
            }
        }
    }

    /// Every audit's books of one trial.
    struct TrialBooks {
        var books: TrialAudit.Books
        var subscriptions: SubscriptionAudit.Books
        var webhook: WebhookAudit.Books
        var notifications: NotificationAudit.Books
        var failovers: [FailoverTiming]
        var grantedBeforeCutover = 0
    }

    /// The books once drained: held purchases released, the webhook's deliveries, the receipts',
    /// the subscriptions' and the notifications', each finding counted as lost or wrong.
    private func readBooks(
        _ load: TrialLoad, audit: TrialAudit, terminal: inout [String: Ticket], sinks: [WebhookSink],
        notifications: NotificationAudit.Books
    ) async throws -> TrialBooks {
        let subscriptionAudit = SubscriptionAudit(store: audit.store, lease: settings.lease)
        let settled = await subscriptionAudit.settle(load.subscriptions, timeout: .seconds(60))
        let (released, findings) = try await audit.releaseHeld(&terminal)
        // Every event, the releases' included, reaches each destination it is for before the books
        // are read: the first destination's figures are the report's, the others' findings join them.
        var webhookBooks = WebhookAudit.Books()
        for (index, sink) in sinks.enumerated() {
            let webhookAudit = WebhookAudit(store: audit.store, lease: settings.lease)
            let settledHooks = await webhookAudit.settle(sink, timeout: .seconds(60))
            var books = try await webhookAudit.check(sink)
            if !settledHooks { books.note("the webhook deliveries to \(sink.name) never settled in 60 s") }
            if index == 0 {
                webhookBooks = books
            } else {
                progress("webhook destination \(sink.name): \(books.delivered) events delivered, \(books.refused) refused and retried")
                webhookBooks.lost += books.lost
                webhookBooks.wrong += books.wrong
                for finding in books.findings { webhookBooks.note(finding) }
            }
        }
        var books = try await audit.check(plan: load.plan, tickets: load.submissions.map(\.ticket), terminal: terminal)
        books.wrong += findings.count
        for finding in findings { books.note(finding) }
        if released != books.held {
            books.wrong += 1
            books.note("wrong: released \(released) held purchases, the capped ones account for \(books.held)")
        }
        let failovers = try await audit.timings(of: load.faults.failovers)
        var subscriptionBooks = try await subscriptionAudit.check(load.subscriptions)
        if let settled { subscriptionBooks.note("the subscriptions never settled in 60 s: \(settled)") }
        books.lost += subscriptionBooks.lost + webhookBooks.lost + notifications.missing.count
        for missing in notifications.missing.prefix(5) { books.note("lost: a notification never stored: \(missing)") }
        books.wrong += webhookBooks.wrong
        for finding in webhookBooks.findings { books.note(finding) }
        books.wrong += subscriptionBooks.wrong + (settled == nil ? 0 : 1)
        for finding in subscriptionBooks.findings { books.note(finding) }
        return TrialBooks(
            books: books, subscriptions: subscriptionBooks, webhook: webhookBooks, notifications: notifications, failovers: failovers)
    }

    private func report(_ load: TrialLoad, trial: Int, books read: TrialBooks, anomalies: [String], drainSeconds: Double) -> TrialReport {
        let books = read.books, faults = load.faults, plan = load.plan
        var report = TrialReport(
            trial: trial, receipts: plan.count, accepted: Set(load.submissions.compactMap(\.ticket)).count,
            refusals: load.submissions.map(\.refusals).reduce(0, +), faults: faults.injected,
            jobsHeldAtSigterm: faults.jobsHeldAtSigterm,
            storeKit: plan.filter { $0.transaction != nil && $0.sameTicketAs == nil }.count,
            refundsRevoked: books.refundsRevoked, refundsBeforeGrant: books.refundsBeforeGrant, held: books.held,
            subscriptions: load.subscriptions.count, periods: read.subscriptions.periods,
            webhookDelivered: read.webhook.delivered, webhookRedelivered: read.webhook.redelivered,
            failovers: read.failovers, reshards: faults.reshards, poisonPushed: faults.poisonPushed,
            poisonDeadLettered: books.poisonDeadLettered,
            lost: books.lost, doubleGrants: books.doubleGrants, stuck: books.stuck, wrongOutcomes: books.wrong,
            anomalies: anomalies.count, drainSeconds: drainSeconds, examples: books.examples + anomalies.prefix(5))
        report.adoptionPlayers = load.adoption.players.count
        report.grantedBeforeCutover = read.grantedBeforeCutover
        report.notificationsSent = read.notifications.sent
        report.notificationsUndelivered = read.notifications.undelivered
        return report
    }
}
