import ArgumentParser
import Foundation
import IAPCLI
import IAPOperations
import IAPStages
import Logging
import PipelineCore

/// `iapctl adopt`: moving a live game onto the pipeline without granting what its old system
/// granted (docs/operations/adoption.md).
struct AdoptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adopt", abstract: "Take in what a game's old system granted, before its cutover.",
        subcommands: [Import.self, Report.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import purchases the old system granted (NDJSON, or CSV with a header): claimed and owned, no event.",
            discussion: """
                Each line: user_id, original_transaction_id, transaction_id (optional), product_id, purchase_date \
                (ISO 8601), quantity (optional), environment (optional). Safe to run again: a row already imported \
                is counted seen; a row whose purchase another user holds is a conflict, listed and left. A stopped \
                import of the same file goes on where it got to. Exits 0 when every line was imported or seen, 1 \
                when a line was invalid or a conflict.
                """)
        @OptionGroup var redis: RedisOptions
        @OptionGroup var appsFile: AppsFileOptions
        @OptionGroup var catalog: CatalogOptions
        @Argument(help: "The file (NDJSON or CSV).") var file: String
        @Option(help: "The app the purchases are of (with IAP_APPS_FILE: one of its bundle ids).") var bundleID: String?
        @Option(help: "Rows a second, at most (beside a running pipeline).") var rate = 2_000
        @Flag(help: "Read and count what would be imported, seen or a conflict; write nothing.") var dryRun = false
        @Flag(help: "Print the report as JSON.") var json = false

        func validate() throws {
            guard (1...1_000_000).contains(rate) else { throw ValidationError("--rate must be 1 to 1000000") }
        }

        func run() async throws {
            let configuration = loadConfiguration(of: self)
            if let bundleID, !configuration.bundleIDs.isEmpty, !configuration.bundleIDs.contains(bundleID) {
                throw ValidationError("--bundle-id \(bundleID) is not one of IAP_BUNDLE_IDS or the apps of IAP_APPS_FILE")
            }
            guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
            let catalog = try configuration.requireCatalog()
            let (rate, dryRun, json) = (rate, dryRun, json)
            let report = try await withStore(configuration) { store in
                var engine = AdoptionImport(store: store, catalog: catalog)
                engine.rate = rate
                engine.dryRun = dryRun
                return try await engine.run(data) { if !json { print($0) } }
            }
            if json {
                printJSON(report)
            } else {
                let verb = report.dryRun ? "would import" : "imported"
                print(
                    "read \(report.read), \(verb) \(report.imported), seen \(report.seen), conflicts \(report.conflicts), "
                        + "invalid \(report.invalid)" + (report.resumedAfter > 0 ? " (went on after line \(report.resumedAfter))" : ""))
            }
            if report.conflicts + report.invalid > 0 { throw ExitCode(1) }
        }
    }

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "report",
            abstract: "What a sync of a player would grant, adopt, hold or leave alone, read from Apple and the books; writes nothing.")
        @OptionGroup var redis: RedisOptions
        @OptionGroup var appsFile: AppsFileOptions
        @OptionGroup var app: AppOptions
        @OptionGroup var key: ServerAPIKeyOptions
        @OptionGroup var client: ServerAPIClientOptions
        @OptionGroup var catalog: CatalogOptions
        @OptionGroup var policy: PolicyOptions
        @OptionGroup var adoption: AdoptionOptions
        @OptionGroup var target: SyncTarget
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let configuration = loadConfiguration(of: self)
            guard configuration.isServerAPIConfigured else {
                throw ValidationError("needs IAP_APPLE_API_KEY_ID, IAP_APPLE_API_ISSUER_ID and IAP_APPLE_API_PRIVATE_KEY_FILE")
            }
            let dedupe = DedupeHandler(
                catalog: try configuration.requireCatalog(), policy: try configuration.purchasePolicy(), adoption: configuration.adoption)
            let target = target
            let (user, bundleID, environment) = (target.user, target.bundleId, target.environment)
            let previews = try await withStore(configuration) { store in
                let accounts = try await target.accounts(in: store)
                guard let lookup = try SupportLookup.make(configuration, store: store, logger: Logger(label: "iapctl")) else { throw ExitCode(1) }
                let history = lookup.customerHistory.of(bundleID)
                var previews: [(account: String, preview: SyncPreview?, failure: String?)] = []
                for account in accounts {
                    switch await history.readAll(account, environment: environment) {
                    case .valid(let receipt):
                        previews.append((account, try await SyncPreview.of(receipt, user: user, dedupe: dedupe, store: store), nil))
                    case .rejected(let reason, _), .misconfigured(let reason, _), .transient(let reason, _, _):
                        previews.append((account, nil, reason))
                    }
                }
                await lookup.shutdown()
                return previews
            }
            if json {
                return printJSON(previews.map { ReportEntry(appTransactionID: $0.account, error: $0.failure, purchases: $0.preview?.lines) })
            }
            if previews.isEmpty { print("\(user) is seated on no Apple Account: name one with --app-transaction-id") }
            for item in previews {
                guard let preview = item.preview else {
                    print("\(item.account): Apple's history not read: \(item.failure ?? "?")")
                    continue
                }
                let counts = preview.counts
                print("\(item.account): " + [SyncPreview.Fate.grant, .adopt, .hold, .known, .reject].map { "\($0.rawValue) \(counts[$0] ?? 0)" }
                    .joined(separator: ", "))
                for line in preview.lines {
                    print("  \(line.fate.rawValue)  \(line.transactionID)  \(line.productID)" + (line.reason.map { "  \($0)" } ?? "")
                        + (line.holder.map { "  holder=\($0.isEmpty ? "(claimed, not granted)" : $0)" } ?? ""))
                }
            }
        }
    }

    struct ReportEntry: Encodable {
        var appTransactionID: String
        var error: String?
        var purchases: [SyncPreview.Line]?

        enum CodingKeys: String, CodingKey {
            case appTransactionID = "app_transaction_id"
            case error, purchases
        }
    }
}
