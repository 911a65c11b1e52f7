import ArgumentParser
import Foundation
import IAPCLI
import PipelineCore
import IAPStages
import IAPOperations

/// `iapctl grant`: grant by hand (a lost order support found, a compensation), once per `--id`.
struct GrantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant", abstract: "Grant a product to a user by hand, once per --id (audited: source=operator).")
    @OptionGroup var redis: RedisOptions
    @Option(help: "The user to grant it to.") var user: String
    @Option(help: "The product id.") var product: String
    @Option(help: "Your id for this grant (a support case): the same id never grants twice.") var id: String
    @Option(help: "How many.") var quantity = 1
    @Option(help: "Who grants, for the audit (default: $USER).") var by: String?
    @Option(help: "Why, for the audit.") var note = ""
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        for (name, value) in [("--user", user), ("--product", product), ("--id", id)] where value.isEmpty || value.count > 128 {
            throw ValidationError("\(name) must be 1 to 128 characters")
        }
        guard (1...1_000_000).contains(quantity) else { throw ValidationError("--quantity must be 1 to 1000000") }
    }

    func run() async throws {
        let configuration = loadConfiguration(of: self)
        let operatorName = by ?? ProcessInfo.processInfo.environment["USER"] ?? "operator"
        let (user, product, id, quantity, note) = (user, product, id, quantity, note)
        let before = try await withStore(configuration) { store in
            try await store.grantByOperator(id: id, user: user, product: product, quantity: quantity, by: operatorName, note: note)
        }
        let unit = PipelineStore.operatorUnit(id: id)
        if json {
            return printJSON(["unit": unit, "result": before == nil ? "granted" : "granted_before", "user_id": before ?? user])
        }
        if let before {
            print("\(unit)  unchanged: granted before to \(before)")
        } else {
            print("\(unit)  granted to \(user)")
        }
    }
}

/// `iapctl revoke`: take a grant back by hand (not a refund: the user's refund count stays).
struct RevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Revoke a grant by hand, once (audited: source=operator).")
    @OptionGroup var redis: RedisOptions
    @Argument(help: "The grant unit (a transaction id, an original transaction id, wol:<id>, operator:<id>).") var unit: String
    @Option(help: "Who revokes, for the audit (default: $USER).") var by: String?
    @Option(help: "Why, for the audit.") var note = ""
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let configuration = loadConfiguration(of: self)
        let operatorName = by ?? ProcessInfo.processInfo.environment["USER"] ?? "operator"
        let (unit, note) = (unit, note)
        let result = try await withStore(configuration) { try await $0.revokeByOperator(unit: unit, by: operatorName, note: note) }
        if json { return printJSON(["unit": unit, "result": result ?? "not_granted"]) }
        switch result {
        case "revoked": print("\(unit)  revoked")
        case let other?: print("\(unit)  unchanged: \(other)")
        case nil: print("\(unit)  unchanged: nothing is granted under it")
        }
    }
}

/// `iapctl user [show] ID`, `iapctl user sync ID`, `iapctl user erase ID --yes`, `iapctl user index-events`.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "A user's record and timeline, a sync of their Apple Accounts, or the user's erasure.",
        subcommands: [UserShowCommand.self, UserSyncCommand.self, UserEraseCommand.self, UserIndexEventsCommand.self, UserGrantCommand.self],
        defaultSubcommand: UserShowCommand.self)
}

/// `iapctl user sync ID [--app-transaction-id A] [--sandbox-history]`: what `POST /v1/users/{id}/sync`
/// does at login, for the Apple Account named, or for every one the user is seated on.
struct UserSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Grant a user every purchase Apple has of their Apple Account that the books do not know (a sync, as at login).")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var tickets: TicketOptions
    @OptionGroup var target: SyncTarget
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let configuration = loadConfiguration(of: self)
        let target = target
        let (user, bundleID, environment) = (target.user, target.bundleId, target.environment)
        let submitted = try await withStore(configuration) { store in
            let accounts = try await target.accounts(in: store)
            var submitted: [[String: String]] = []
            for account in accounts {
                let (ticket, created) = try await store.submitSync(
                    user: user, appleAccount: account, environment: environment, bundleID: bundleID, ttl: configuration.ticketTTL)
                submitted.append(["app_transaction_id": account, "ticket": ticket, "new": created ? "true" : "false"])
            }
            return submitted
        }
        if json { return printJSON(submitted) }
        if submitted.isEmpty { print("\(user) is seated on no Apple Account: nothing to sync (name one with --app-transaction-id)") }
        for line in submitted {
            print("\(line["app_transaction_id"] ?? "?")  ticket \(line["ticket"] ?? "?")\(line["new"] == "true" ? "" : " (already syncing)")")
        }
    }
}

/// `iapctl user erase ID --yes`: what `DELETE /v1/users/{id}` does (docs/operations/erasure.md).
struct UserEraseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase", abstract: "Erase a user: their own keys deleted, their purchases kept under a pseudonym.")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var appsFile: AppsFileOptions
    @Argument(help: "The user id.") var user: String
    @Flag(help: "Yes, erase this user (it cannot be undone).") var yes = false
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        guard yes else {
            print("iapctl user erase: nothing done; erasing \(user) cannot be undone: add --yes")
            throw ExitCode(2)
        }
        let configuration = loadConfiguration(of: self)
        let user = user
        let erasure = try await withStore(configuration) { try await $0.erase(user: user) }
        if json { return printJSON(erasure) }
        print("erased \(erasure.userID): purchases kept as \(erasure.pseudonym); \(erasure.renamed) records renamed, "
            + "\(erasure.entriesDeleted) stream entries and \(erasure.keysDeleted) keys deleted")
    }
}

/// `iapctl user index-events`: every bucket's fulfilment stream indexed in its users' events
/// (`user-events`), for the entries written before the index existed (the console's user page).
struct UserIndexEventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index-events",
        abstract: "Index the fulfilment streams' entries in each user's events (those written before the index existed).",
        discussion: """
            Reads every bucket's stream a page at a time; each page is indexed in one step. Harmless to run again and beside \
            the pipeline: a user keeps their newest 100 events a bucket either way. Entries the stream no longer holds \
            (older than IAP_FULFILMENT_RETENTION_S, or erased) cannot be indexed.
            """)
    @OptionGroup var redis: RedisOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let configuration = loadConfiguration(of: self)
        let json = json
        let read = try await withStore(configuration) { store in
            try await store.indexUserEvents { bucket, read in if !json { print("bucket \(bucket): \(read) entries indexed") } }
        }
        if json { return printJSON(["entries": read]) }
        print("\(read) entries indexed")
    }
}

/// `iapctl user [show] ID`: one user's record, grants, revocations, holds, subscriptions and entitlements.
struct UserShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "A user's record and timeline: purchases, revocations, holds, subscriptions, entitlements.")
    @OptionGroup var redis: RedisOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var catalog: CatalogOptions
    @Argument(help: "The user id.") var user: String
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let configuration = loadConfiguration(of: self)
        let products: ProductCatalog?
        do {
            products = configuration.hasCatalog ? try configuration.requireCatalog() : nil
        } catch {
            failConfiguration(error)
        }
        let user = user
        let report = try await withStore(configuration) { try await $0.userReport(user: user, catalog: products) }
        if json { return printJSON(report) }
        print("user \(report.userID)  refunds \(report.refunds)" + (report.refundsProrated > 0 ? " + \(report.refundsProrated) milliunits in part" : ""))
        if let record = report.record {
            print("consent: \(record.consent.map { $0 ? "yes" : "no" } ?? "never said")  apple accounts: "
                + (record.appleAccounts.isEmpty ? "none" : record.appleAccounts.joined(separator: ", ")))
            print("purchases (newest first\(record.nextBefore == nil ? "" : ", the newest 200")):")
            for purchase in record.purchases {
                let detail = ["product_id", "quantity", "revoked_quantity", "price", "currency", "environment", "source", "reason"]
                    .compactMap { key in purchase[key].map { "\(key)=\($0)" } }.joined(separator: " ")
                print("  \(purchase["unit"] ?? "?")  \(purchase["state"] ?? "?")  \(detail)")
            }
            if record.purchases.isEmpty { print("  none indexed") }
        }
        if let entitlements = report.entitlements {
            print("entitlements: " + (entitlements.entitlements.isEmpty ? "none" : entitlements.entitlements.map {
                "\($0.entitlement) (\($0.status)\($0.expiresAt.map { " until \($0)" } ?? ""))"
            }.joined(separator: ", ")))
        }
        for (original, record) in report.subscriptions.sorted(by: { $0.key < $1.key }) {
            print("subscription \(original): \(record["product_id"] ?? "?") \(record["status"] ?? "?") expires_at=\(record["expires_at"] ?? "-")")
        }
        if !report.lifetime.isEmpty { print("non-consumables: \(report.lifetime.joined(separator: ", "))") }
        for purchase in report.held { print("held \(purchase.unit): \(purchase.reason) (\(purchase.productID))") }
        print("timeline:")
        for entry in report.timeline {
            let detail = [
                "notification_type", "subtype", "product_id", "unit", "entitlement", "status", "reason", "revocation_reason",
                "auto_renew", "change", "renewal_product_id", "expires_at", "app_transaction_id", "source",
            ]
                .compactMap { key in entry[key].map { "\(key)=\($0)" } }.joined(separator: " ")
            print("  \(entry["id"] ?? "")  \(entry["event"] ?? "?")  \(detail)")
        }
        if report.timeline.isEmpty { print("  nothing") }
    }
}

/// `iapctl user grant ID --entitlement E (--until ISO | --days N | --hours N) --reason R --grant-id G`:
/// an entitlement given to the user until a moment (`grant_for_a_time`, source `operator`), once
/// per `--grant-id`; `--take-back` ends it before its end.
struct UserGrantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant",
        abstract: "Give a user an entitlement until a moment (VIP for 7 days), once per --grant-id; or take it back (--take-back).",
        discussion: """
            The entitlement must be one a product of the catalog gives; the end after now and at most a year away. It shows \
            in GET /v1/users/{id}/entitlements beside any purchase of the same entitlement, and ends by itself: an \
            entitlement_ended event, once, from whichever granter finds it due. Exit 0 done, 1 refused (the id names \
            another grant, or no such grant to take back).
            """)
    @OptionGroup var redis: RedisOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var catalog: CatalogOptions
    @Argument(help: "The user id.") var user: String
    @Option(help: "Your id for this grant (a support case): the same id never grants twice.") var grantId: String
    @Option(help: "The entitlement (premium, no_ads…).") var entitlement: String?
    @Option(help: "When it ends, ISO 8601 (2026-12-09T00:00:00Z).") var until: String?
    @Option(help: "Or how many days from now.") var days: Int?
    @Option(help: "Or how many hours from now.") var hours: Int?
    @Option(help: "Why, for the audit and the event.") var reason: String?
    @Option(help: "Who grants, for the audit (default: $USER).") var by: String?
    @Flag(help: "Take the grant --grant-id back now instead.") var takeBack = false
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        if takeBack { return }
        guard entitlement != nil, reason != nil else { throw ValidationError("--entitlement and --reason are required") }
        guard [until != nil, days != nil, hours != nil].filter({ $0 }).count == 1 else {
            throw ValidationError("give one of --until, --days, --hours")
        }
    }

    func run() async throws {
        let configuration = loadConfiguration(of: self)
        let operatorName = by ?? ProcessInfo.processInfo.environment["USER"] ?? "operator"
        let (user, id, takeBack) = (user, grantId, takeBack)
        if takeBack {
            let outcome = try await withStore(configuration) {
                try await $0.endTimedGrant(user: user, grantID: id, why: .revoked, by: operatorName)
            }
            switch outcome {
            case .ended(let grant), .unchanged(let grant): print(describe(grant))
            case .notFound:
                FileHandle.standardError.write(Data("\(user) has no grant \(id)\n".utf8))
                throw ExitCode(1)
            }
            return
        }
        var end: Int64?
        if let until {
            guard let ms = Self.moment(until) else { throw ValidationError("--until: an ISO 8601 date-time such as 2026-12-09T00:00:00Z") }
            end = ms
        }
        let length: Duration? = days.map { .seconds($0 * 86_400) } ?? hours.map { .seconds($0 * 3_600) }
        let order = TimedGrantOrder(grantID: id, entitlement: entitlement ?? "", until: end, duration: length, reason: reason ?? "")
        let grant: TimedGrant
        do {
            grant = try order.grant(catalog: try configuration.requireCatalog(), source: "operator", by: operatorName, now: currentTimeMs())
        } catch let refusal as TimedGrantOrder.Refusal {
            throw ValidationError("\(refusal.code): \(refusal.message)")
        }
        let outcome = try await withStore(configuration) { try await $0.grantForATime(user: user, grant: grant, exactUntil: end != nil) }
        switch outcome {
        case .granted(let made): print("granted: " + describe(made))
        case .seenBefore(let made): print("granted before: " + describe(made))
        case .idTaken(let other):
            FileHandle.standardError.write(Data("--grant-id \(id) names another grant of \(user): \(describe(other))\n".utf8))
            throw ExitCode(1)
        }
    }

    func describe(_ grant: TimedGrant) -> String {
        if json {
            return String(decoding: (try? JSONSerialization.data(withJSONObject: grant.json, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
        }
        return "\(grant.grantID): \(grant.entitlement) until \(Ticket.iso8601(milliseconds: grant.until)), \(grant.status)"
            + (grant.endedBy.map { " (\($0))" } ?? "") + ", \(grant.reason)"
    }

    static func moment(_ text: String) -> Int64? {
        (try? Date.ISO8601FormatStyle.iso8601.parse(text)).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    }
}
