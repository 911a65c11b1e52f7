import AppStoreServerAPI
import ArgumentParser
import Foundation
import IAPCLI
import IAPPipeline

/// `iapctl apple …`: the App Store Server API for an operator.
struct AppleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple", abstract: "Ask Apple's App Store Server API (needs the API keys).", subcommands: [TestNotification.self, Notifications.self, Refunds.self])

    /// `iapctl apple test-notification`: Request a Test Notification, then its status until Apple
    /// reports the attempt; exit 0 only when the notification arrived and the intake stored it.
    struct TestNotification: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test-notification",
            abstract: "Have Apple send a TEST notification and check that the intake stored it (exit 0 only then).")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var appsFile: AppsFileOptions
        @OptionGroup var app: AppOptions
        @OptionGroup var key: ServerAPIKeyOptions
        @OptionGroup var client: ServerAPIClientOptions
        @Option(help: "production or sandbox.") var environment = "production"
        @Option(help: "Seconds to wait for Apple to report its attempt (1 to 600).") var wait = 60
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard ["production", "sandbox"].contains(environment) else { throw ValidationError("--environment: production or sandbox") }
            guard (1...600).contains(wait) else { throw ValidationError("--wait: 1 to 600 seconds") }
        }

        func run() async throws {
            let configuration = loadConfiguration(redis, app, key, client, appsFile)
            guard configuration.isServerAPIConfigured else {
                throw ValidationError("needs IAP_APPLE_API_KEY_ID, IAP_APPLE_API_ISSUER_ID and IAP_APPLE_API_PRIVATE_KEY_FILE")
            }
            let (environment, wait) = (environment, wait)
            let outcome = try await withStore(configuration) { store in
                let probe: TestNotificationProbe?
                do { probe = try TestNotificationProbe.make(configuration, store: store) } catch let error as ConfigurationError { failConfiguration(error) }
                guard let probe else { throw ExitCode(1) }
                return try await probe.runOnce(environment: environment, wait: .seconds(wait))
            }
            if json {
                printJSON(outcome)
            } else {
                print("test notification \(outcome.token) (\(outcome.environment)): \(outcome.result)")
                if let uuid = outcome.notificationUUID { print("  notificationUUID  \(uuid)") }
                for attempt in outcome.attempts {
                    print("  attempt           \(attempt.sendAttemptResult ?? "?") at \(attempt.attemptDate.map(String.init) ?? "?")")
                }
                if let ticket = outcome.ticket { print("  stored as ticket  \(ticket) (\(outcome.ticketStatus ?? "gone"))") }
            }
            if !outcome.arrived { throw ExitCode(1) }
        }
    }

    /// `iapctl apple notifications …`: Apple's notification history.
    struct Notifications: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "notifications", abstract: "Apple's notification history (Get Notification History).",
            subcommands: [Backfill.self])
    }

    /// `iapctl apple notifications backfill`: every notification of a window of Apple's history,
    /// verified and stored as the intake would; what is stored already is `seen_before`.
    struct Backfill: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "backfill",
            abstract: "Store what Apple's notification history holds and the pipeline lacks (reruns are harmless).",
            discussion: """
                Pages Get Notification History and puts each signedPayload through the intake's own checks and \
                accept_notification. Prints pages, seen, new, seen before and invalid. Exit 0 when every page \
                was read, 1 when Apple or Redis stopped it (the counts say how far it got; run it again).
                """)
        @OptionGroup var redis: RedisOptions
        @OptionGroup var appsFile: AppsFileOptions
        @OptionGroup var tickets: TicketOptions
        @OptionGroup var app: AppOptions
        @OptionGroup var appAppleID: AppAppleIDOptions
        @OptionGroup var key: ServerAPIKeyOptions
        @OptionGroup var client: ServerAPIClientOptions
        @Option(help: "From: ISO-8601 (2026-11-01T00:00:00Z, 2026-11-01) or back from now (72h, 30m, 7d); Apple keeps 180 days.")
        var since: String
        @Option(help: "Until (exclusive), as --since; default now.") var until: String?
        @Flag(help: "Only what Apple could not deliver (or is still retrying).") var onlyFailures = false
        @Option(help: "Only this notificationType (not with --transaction-id).") var type: String?
        @Option(help: "Only this subtype (needs --type).") var subtype: String?
        @Option(help: "Only this customer's notifications: any of their transaction ids (not with --type).") var transactionId: String?
        @Option(help: "production or sandbox.") var environment = "production"
        @Option(help: "With IAP_APPS_FILE: whose history (Apple keeps one per app), with that app's key; default the first app.")
        var bundleId: String?
        @Flag(help: "Print JSON.") var json = false

        func query(now: Int64) throws -> NotificationHistoryQuery {
            guard let start = HistoryTime.parse(since, now: now) else {
                throw ValidationError("--since: an ISO-8601 date-time, a date, or a duration back from now such as 72h")
            }
            var end = now
            if let until {
                guard let parsed = HistoryTime.parse(until, now: now) else { throw ValidationError("--until: as --since") }
                end = parsed
            }
            let query = NotificationHistoryQuery(
                startDate: start, endDate: end, notificationType: type, notificationSubtype: subtype, transactionId: transactionId,
                onlyFailures: onlyFailures ? true : nil)
            if let problem = query.problem(now: now) { throw ValidationError(problem) }
            return query
        }

        func validate() throws {
            guard ["production", "sandbox"].contains(environment) else { throw ValidationError("--environment: production or sandbox") }
            _ = try query(now: Int64(Date().timeIntervalSince1970 * 1000))
        }

        func run() async throws {
            let configuration = loadConfiguration(redis, tickets, app, appAppleID, key, client, appsFile)
            guard configuration.isServerAPIConfigured else {
                throw ValidationError("needs IAP_APPLE_API_KEY_ID, IAP_APPLE_API_ISSUER_ID and IAP_APPLE_API_PRIVATE_KEY_FILE")
            }
            guard !configuration.bundleIDs.isEmpty else { throw ValidationError("needs IAP_BUNDLE_IDS: what notifications are checked against") }
            let query = try query(now: Int64(Date().timeIntervalSince1970 * 1000))
            let environment: ServerAPIEnvironment = environment == "sandbox" ? .sandbox : .production
            let json = json
            let report = try await withStore(configuration) { store in
                let walks: [(bundleID: String, walk: NotificationHistoryWalk)]
                do { walks = try NotificationHistoryWalk.makeEach(configuration, store: store, logger: bootstrapLogging(label: "iapctl")) } catch let error as ConfigurationError {
                    failConfiguration(error)
                }
                let chosen = (bundleId.map { named in walks.first { $0.bundleID == named } } ?? walks.first)?.walk
                var report: NotificationHistoryWalk.Report?
                if let chosen {
                    report = await chosen.run(query, environment: environment) { report in
                        if !json { FileHandle.standardError.write(Data("page \(report.pages): \(report.seen) seen, \(report.new) new\n".utf8)) }
                    }
                }
                for app in walks { await app.walk.client.shutdown() }
                guard let report else {
                    throw ValidationError(bundleId.map { "--bundle-id: no app \($0) with a Server API key" } ?? "no app with a Server API key")
                }
                return report
            }
            if json {
                printJSON(report)
            } else {
                print("notification history \(report.environment) \(report.startDate)..<\(report.endDate): \(report.complete ? "complete" : "INCOMPLETE")")
                print("  pages        \(report.pages)")
                print("  seen         \(report.seen)")
                print("  new          \(report.new)")
                print("  seen before  \(report.seenBefore)")
                print("  invalid      \(report.invalid)")
                for refusal in report.refusals { print("    \(refusal.code): \(refusal.message)") }
                if let error = report.error { print("  stopped: \(error)") }
            }
            if !report.complete { throw ExitCode(1) }
        }
    }

    /// `iapctl apple refunds (--user ID | --transaction-id ID) [--apply]`: Get Refund History, each
    /// refunded purchase with where it stands here; `--apply` takes back, once, what is still granted.
    struct Refunds: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "refunds",
            abstract: "Refunds Apple made that the pipeline may not know (Get Refund History); --apply takes them back once.",
            discussion: """
                Asks Get Refund History with the transaction id given, or with each purchase the books hold for the user \
                (at most 50), and prints every refunded purchase with its state here (granted, revoked, claimed, \
                unclaimed, unknown, ...). --apply stores each one not yet revoked or refunded here as a REFUND \
                notification (UUID refund-history:<transaction id>, once) for the notifier: a grant is revoked once, with \
                source refund_history on its fulfilment entry; a purchase not granted is remembered as refunded. Exit 0 \
                when every page was read, 1 when Apple or Redis stopped it (run it again: it is harmless).
                """)
        @OptionGroup var redis: RedisOptions
        @OptionGroup var appsFile: AppsFileOptions
        @OptionGroup var tickets: TicketOptions
        @OptionGroup var app: AppOptions
        @OptionGroup var key: ServerAPIKeyOptions
        @OptionGroup var client: ServerAPIClientOptions
        @OptionGroup var catalog: CatalogOptions
        @Option(help: "The user whose purchases' customers are asked.") var user: String?
        @Option(help: "Any transaction id of the customer.") var transactionId: String?
        @Flag(help: "Take back, once, each refund not yet revoked or refunded here.") var apply = false
        @Flag(help: "Only refunds since the last read of this customer (its kept revision).") var newOnly = false
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard (user == nil) != (transactionId == nil) else { throw ValidationError("give --user or --transaction-id (one of them)") }
            if let transactionId, !(1...128).contains(transactionId.utf8.count) || !transactionId.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
                throw ValidationError("--transaction-id: 1 to 128 digits")
            }
        }

        func run() async throws {
            let configuration = loadConfiguration(redis, tickets, app, key, client, catalog, appsFile)
            guard configuration.isServerAPIConfigured else {
                throw ValidationError("needs IAP_APPLE_API_KEY_ID, IAP_APPLE_API_ISSUER_ID and IAP_APPLE_API_PRIVATE_KEY_FILE")
            }
            let (user, transactionId, apply, newOnly) = (user, transactionId, apply, newOnly)
            let report = try await withStore(configuration) { store in
                let logger = bootstrapLogging(label: "iapctl")
                let audit: RefundHistoryAudit?
                do { audit = try RefundHistoryAudit.make(configuration, store: store, logger: logger) } catch let error as ConfigurationError {
                    failConfiguration(error)
                }
                guard let audit else { throw ExitCode(2) }
                var asked: [String] = []
                do {
                    if let transactionId { asked = [transactionId] } else { asked = try await audit.transactionIDs(ofUser: user ?? "") }
                } catch {
                    for client in audit.clients { await client.shutdown() }
                    throw error
                }
                let report = await audit.audit(transactionIDs: asked, apply: apply, fromLastRevision: newOnly, logger: logger)
                for client in audit.clients { await client.shutdown() }
                return report
            }
            if json {
                print(report.json.canonicalText)
            } else {
                print("refund history (\(report.asked.count) customer\(report.asked.count == 1 ? "" : "s") asked): \(report.refunds.count) refunded, \(report.complete ? "complete" : "INCOMPLETE")")
                for refund in report.refunds {
                    let transaction = refund.transaction
                    var line = "  \(transaction.transactionID)  \(transaction.productID)  \(refund.books.state)"
                    if let owner = refund.books.grant["user_id"] ?? refund.books.owner { line += "  user \(owner)" }
                    if let action = refund.action { line += "  → \(action)" }
                    if let ticket = refund.ticket { line += " (ticket \(ticket))" }
                    print(line)
                }
                if user != nil, report.asked.isEmpty { print("  the books hold no purchase of this user") }
                if let error = report.error { print("  stopped: \(error)") }
            }
            if !report.complete { throw ExitCode(1) }
        }
    }
}
