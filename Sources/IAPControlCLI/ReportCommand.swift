import ArgumentParser
import IAPCLI
import IAPOperations
import PipelineCore
import PlainJSON

/// `iapctl report [show] REPORT …` and `iapctl report recount --day D`.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "The business's figures: a report, or a day recounted from the grant records.",
        subcommands: [ReportShowCommand.self, ReportRecountCommand.self], defaultSubcommand: ReportShowCommand.self)
}

/// `iapctl report [show] REPORT [--from D] [--to D] [--by day|product|storefront|currency]`: the
/// same report as `GET /v1/reports/{report}`, as a table or (`--json`) the API's JSON.
struct ReportShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Revenue, subscriptions or refunds by day, product, storefront or currency.",
        discussion: """
            From the figures counted with each fulfilment event (docs/reports.md). Days are UTC, both ends included; \
            without --from and --to, the last 30 days. Money is Apple's customer price in each row's currency, never \
            converted, not proceeds.
            """)
    @OptionGroup var redis: RedisOptions
    @Argument(help: "revenue, subscriptions or refunds") var report: String
    @Option(help: "The first UTC day, YYYY-MM-DD (default: 29 days before --to).") var from: String?
    @Option(help: "The last UTC day, YYYY-MM-DD (default: today).") var to: String?
    @Option(help: "What a row is of: day, product, storefront or currency.") var by: String?
    @Option(help: "Production or Sandbox.") var environment: String?
    @Flag(help: "Print the API's JSON.") var json = false

    func run() async throws {
        let query: ReportQuery
        do {
            query = try ReportQuery(
                report: report, from: from, to: to, by: by, environment: environment, today: FigureDay(milliseconds: currentTimeMs()))
        } catch {
            throw ValidationError("\(error.code): \(error.message)")
        }
        let configuration = loadConfiguration(of: self)
        let (figures, subscribers) = try await withStore(configuration) { store in
            (try await store.reportFigures(of: query.days).figures(by: query.by),
             query.report == .subscriptions ? try await store.subscriberCells() : nil)
        }
        let made = BusinessReport(query, figures: figures, subscriberCells: subscribers)
        if json { return print(made.json.canonicalText) }
        print(Self.table(made))
    }

    /// The report as aligned columns: the row's key, its currency (unless by currency), each
    /// figure (money in units of its currency: 14.97), then the totals.
    static func table(_ report: BusinessReport) -> String {
        let money = report.query.report != .subscriptions && report.query.by != .currency
        let head = [report.query.by.rawValue] + (money ? ["currency"] : []) + report.columns.map {
            $0.hasSuffix("_milliunits") ? String($0.dropLast("_milliunits".count)) : $0
        }
        func line(_ row: BusinessReport.Row, key: String) -> [String] {
            [key] + (money ? [row.currency ?? "-"] : []) + report.columns.map {
                $0.hasSuffix("_milliunits") ? Self.units(row[$0]) : String(row[$0])
            }
        }
        // By currency, each row is its currency's total already.
        let totals = report.query.by == .currency ? [] : report.totals.map { line($0, key: "total") }
        let body = report.rows.map { line($0, key: $0.key.isEmpty ? "-" : $0.key) } + totals
        let widths = head.indices.map { column in ([head] + body).map { $0[column].count }.max() ?? 0 }
        func render(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == 0 ? cell.padding(toLength: widths[0], withPad: " ", startingAt: 0) : cell.leftPadded(widths[index])
            }.joined(separator: "  ")
        }
        var lines = ["\(report.query.report.rawValue) \(report.query.from) to \(report.query.to), \(report.query.environment)"]
        lines.append(render(head))
        lines += body.map(render)
        if body.isEmpty { lines.append("(nothing counted in this range)") }
        if report.unpricedPurchases > 0 {
            lines.append("\(report.unpricedPurchases) purchases had no price (legacy receipts): counted, in no money")
        }
        if let subscribers = report.subscribers { lines += [""] + Self.table(subscribers) }
        return lines.joined(separator: "\n")
    }

    /// Subscribers now, a row per product, storefront or currency, each of its currency; then the
    /// total per currency.
    static func table(_ snapshot: SubscriberSnapshot) -> [String] {
        let byCurrency = snapshot.by == .currency
        let head = (byCurrency ? [] : [snapshot.by.rawValue]) + ["currency", "active", "trials", "mrr (estimated)"]
        func line(_ row: BusinessReport.Row, key: String?) -> [String] {
            (key.map { [$0] } ?? []) + [row.currency ?? "-", String(row["active"]), String(row["trials"]), units(row["mrr_milliunits"])]
        }
        var body = snapshot.rows.map { line($0, key: byCurrency ? nil : ($0.key.isEmpty ? "-" : $0.key)) }
        if !byCurrency { body += snapshot.totals.map { line($0, key: "total") } }
        let widths = head.indices.map { column in ([head] + body).map { $0[column].count }.max() ?? 0 }
        func render(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == 0 ? cell.padding(toLength: widths[0], withPad: " ", startingAt: 0) : cell.leftPadded(widths[index])
            }.joined(separator: "  ")
        }
        return ["subscribers now"] + [render(head)] + (body.isEmpty ? ["(no subscribers)"] : body.map(render))
    }

    /// Milliunits as units: 14970 is 14.97, 1234 is 1.234.
    static func units(_ milliunits: Int64) -> String {
        let sign = milliunits < 0 ? "-" : ""
        let whole = abs(milliunits) / 1000, part = abs(milliunits) % 1000
        let fraction = part % 10 == 0 ? String(part / 10 + 100).dropFirst() : String(part + 1000).dropFirst()
        return "\(sign)\(whole).\(fraction)"
    }
}

/// `iapctl report recount --day D`: the day's sales and refunds in whole rebuilt from the grant
/// records and set beside the live figures; exits 1 on a difference (the drill runs it after
/// every trial).
struct ReportRecountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recount", abstract: "Rebuild a day's sales and refunds from the grant records; exit 1 on any difference.",
        discussion: """
            Reads every grant record (SCAN): minutes on a large ledger, harmless beside the pipeline. Refunds in part or \
            reversed, subscriptions' lives, refund requests and declines keep no history in the records and are not \
            recounted (docs/reports.md). The subscribers now are rebuilt from the subscription records; --repair first \
            counts each record in the live count as its last step would have (once, for records written before the \
            count existed; a record counted already changes nothing).
            """)
    @OptionGroup var redis: RedisOptions
    @Option(help: "The UTC day, YYYY-MM-DD.") var day: String
    @Flag(help: "Count each subscription record in the live count of subscribers first (once, after an upgrade).") var repair = false
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        guard let day = FigureDay(day) else { throw ValidationError("--day must be a UTC day, YYYY-MM-DD") }
        let configuration = loadConfiguration(of: self)
        let recount = try await withStore(configuration) { try await $0.recountFigures(day: day, repairSubscribers: repair) }
        if json {
            print(recount.json.canonicalText)
        } else {
            print("\(day): \(recount.recordsRead) grant records read, \(recount.compared) figures compared, "
                + "\(recount.differences.count) differ")
            print("subscribers now: \(recount.subscriptionsRead) subscription records read"
                + (repair ? ", \(recount.subscriptionsRepaired) counted anew" : ""))
            for difference in recount.differences {
                print("  \(difference.field): live \(difference.live), records \(difference.records)")
            }
            if !recount.unsure.isEmpty { print("refunds not compared (in part or reversed): \(recount.unsure.joined(separator: ", "))") }
        }
        if !recount.differences.isEmpty { throw ExitCode(1) }
    }
}
