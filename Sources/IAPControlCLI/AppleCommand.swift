import AppStoreServerAPI
import ArgumentParser
import Foundation
import IAPCLI
import IAPSettings
import IAPStages
import IAPOperations
import PlainJSON

/// `iapctl apple …`: the App Store Server API for an operator.
struct AppleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple", abstract: "Ask Apple's App Store Server API (needs the API keys).", subcommands: [TestNotification.self, Notifications.self, Refunds.self, Extend.self, RetentionCommand.self])

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
            let configuration = loadConfiguration(of: self)
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
            let configuration = loadConfiguration(of: self)
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
            let configuration = loadConfiguration(of: self)
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
                for id in report.unknown { print("  Apple knows no transaction \(id) (any app, production or sandbox)") }
                if let error = report.error { print("  stopped: \(error)") }
            }
            if !report.complete || (!report.asked.isEmpty && report.unknown.count == report.asked.count) { throw ExitCode(1) }
        }
    }

    /// `iapctl apple extend`: a subscriber's renewal date (`--original-transaction-id`), every
    /// active subscriber's of a product (`--all --product`), or how far the latter got (`--status`).
    struct Extend: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "extend",
            abstract: "Extend renewal dates (one subscriber, or all active subscribers of a product) and read Apple's progress.",
            discussion: """
                Apple allows at most 90 days, and two extensions per subscriber in 365 days; its refusals are printed with \
                their codes (4030004 not eligible: expired, free offer, billing retry; 4030005 already extended twice). One \
                subscriber: once Apple answers, the subscription's latest transaction is read again and applied as Apple's \
                RENEWAL_EXTENDED would be (expires_at moves, a renewal_extended event for the backend). All subscribers: \
                Apple tells each one RENEWAL_EXTENDED, which the intake applies; --wait S reads the status until Apple \
                completes or S seconds pass. The same --request-id again is the same extension. Exit 0 done, 1 Apple \
                refused (or did not complete within --wait), 2 Apple or Redis could not be asked.
                """)
        @OptionGroup var redis: RedisOptions
        @OptionGroup var appsFile: AppsFileOptions
        @OptionGroup var tickets: TicketOptions
        @OptionGroup var app: AppOptions
        @OptionGroup var key: ServerAPIKeyOptions
        @OptionGroup var client: ServerAPIClientOptions
        @Option(help: "The subscription to extend (its original transaction id).") var originalTransactionId: String?
        @Flag(help: "Every active subscriber of --product.") var all = false
        @Flag(help: "Only read the status of --product's extension --request-id.") var status = false
        @Option(help: "The product (with --all or --status).") var product: String?
        @Option(help: "ISO 3166-1 alpha-3 storefronts, comma-separated (with --all; default every storefront).") var storefronts: String?
        @Option(help: "Days to extend by, 1 to 90.") var days: Int?
        @Option(help: "Apple's extendReasonCode: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.")
        var reason: Int?
        @Option(help: "Names the extension (a UUID by default): the same one again is the same extension.") var requestId: String?
        @Option(help: "With --all: seconds to wait for Apple to complete (0 to 600).") var wait = 0
        @Option(help: "production or sandbox (with --all or --status; one subscriber: the record's, else both in turn).")
        var environment = "production"
        @Option(help: "With IAP_APPS_FILE and --all or --status: the app whose key asks (default the first).") var bundleId: String?
        @Flag(help: "Print JSON.") var json = false

        var storefrontList: [String]? {
            storefronts.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() } }
        }

        func validate() throws {
            let modes = [originalTransactionId != nil, all, status].filter { $0 }.count
            guard modes == 1 else { throw ValidationError("give one of --original-transaction-id, --all or --status") }
            guard ["production", "sandbox"].contains(environment) else { throw ValidationError("--environment: production or sandbox") }
            if all || status { guard product != nil else { throw ValidationError("--product is required with --all and --status") } }
            if status { guard requestId != nil else { throw ValidationError("--status needs --request-id") } }
            if !status {
                guard let days, (1...RenewalExtension.maxDays).contains(days) else { throw ValidationError("--days: 1 to 90 (Apple's limit)") }
                guard let reason, RenewalExtension.reasonCodes.contains(reason) else { throw ValidationError("--reason: 0, 1, 2 or 3") }
            }
            if let storefrontList {
                guard all else { throw ValidationError("--storefronts goes with --all") }
                guard !storefrontList.isEmpty, storefrontList.allSatisfy({ $0.count == 3 && $0.allSatisfy(\.isLetter) }) else {
                    throw ValidationError("--storefronts: ISO 3166-1 alpha-3 codes such as USA,FRA")
                }
            }
            if let requestId, !(1...128).contains(requestId.utf8.count) { throw ValidationError("--request-id: 1 to 128 characters") }
            guard (0...600).contains(wait) else { throw ValidationError("--wait: 0 to 600 seconds") }
        }

        func run() async throws {
            let configuration = loadConfiguration(of: self)
            guard configuration.isServerAPIConfigured else {
                throw ValidationError("needs IAP_APPLE_API_KEY_ID, IAP_APPLE_API_ISSUER_ID and IAP_APPLE_API_PRIVATE_KEY_FILE")
            }
            let request = requestId ?? UUID().uuidString.lowercased()
            let apiEnvironment: ServerAPIEnvironment = environment == "sandbox" ? .sandbox : .production
            let (original, all, product, storefronts, days, reason, wait, bundleId) =
                (originalTransactionId, all, product, storefrontList, days ?? 0, reason ?? 0, wait, bundleId)
            let outcome: Result<JSONValue, RenewalExtensions.Failure> = try await withStore(configuration) { store in
                let logger = bootstrapLogging(label: "iapctl")
                let extensions: RenewalExtensions?
                do { extensions = try RenewalExtensions.make(configuration, store: store, logger: logger) } catch let error as ConfigurationError {
                    failConfiguration(error)
                }
                guard let extensions else { throw ExitCode(2) }
                var outcome: Result<JSONValue, RenewalExtensions.Failure>
                if let original {
                    outcome = await extensions.extend(
                        originalTransactionID: original, days: days, reason: reason, requestIdentifier: request, logger: logger
                    ).map(\.json)
                } else {
                    var started: Result<String, RenewalExtensions.Failure> = .success(request)
                    if all {
                        started = await extensions.extendAll(
                            productID: product!, storefronts: storefronts, days: days, reason: reason, requestIdentifier: request,
                            environment: apiEnvironment, bundleID: bundleId)
                    }
                    switch started {
                    case .failure(let failure): outcome = .failure(failure)
                    case .success(let identifier):
                        let deadline = ContinuousClock.now + .seconds(all ? wait : 0)
                        var read = await extensions.status(
                            productID: product!, requestIdentifier: identifier, environment: apiEnvironment, bundleID: bundleId)
                        while case .success(let state) = read, !state.complete, ContinuousClock.now < deadline {
                            try await Task.sleep(for: .seconds(1))  // Apple's progress, polled as an operator would
                            read = await extensions.status(
                                productID: product!, requestIdentifier: identifier, environment: apiEnvironment, bundleID: bundleId)
                        }
                        if all, wait == 0, case .failure = read {
                            // Apple took it; its status may not exist yet.
                            read = .success(.init(requestIdentifier: identifier, complete: false))
                        }
                        outcome = read.map(\.json)
                    }
                }
                for client in extensions.clients { await client.shutdown() }
                return outcome
            }
            switch outcome {
            case .success(let answer):
                if json {
                    print(answer.canonicalText)
                } else {
                    for (name, value) in (answer.object ?? [:]).sorted(by: { $0.key < $1.key }) {
                        print("\(name.padding(toLength: 24, withPad: " ", startingAt: 0))\(value.lenientString ?? value.canonicalText)")
                    }
                }
                if (all && wait > 0) || status, answer["complete"]?.bool == false { throw ExitCode(1) }
            case .failure(let failure):
                FileHandle.standardError.write(Data("Apple did not extend: \(failure.code): \(failure.message)\n".utf8))
                throw ExitCode(failure.transient ? 2 : 1)
            }
        }
    }
}
