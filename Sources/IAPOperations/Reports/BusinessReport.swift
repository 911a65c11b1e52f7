import PipelineCore
import PlainJSON

/// A business report made from the days' figures: rows by day, product, storefront or currency,
/// each figure named, money in milliunits of its currency (Apple's customer price, never
/// converted, not proceeds), and the totals. The same for the API, `iapctl report` and the console.
package struct BusinessReport: Sendable, Equatable {
    /// One row: what it is of (`key`: the day, product, storefront or currency), its currency where
    /// money is in it, and its figures by column.
    package struct Row: Sendable, Equatable {
        package var key: String
        package var currency: String?
        package var figures: [String: Int64]

        package subscript(_ column: String) -> Int64 { figures[column] ?? 0 }
    }

    package var query: ReportQuery
    package var columns: [String]
    package var rows: [Row]
    /// The whole range: one row per currency (revenue, refunds), or one row (subscriptions).
    package var totals: [Row]
    /// Purchases Apple said no price for (legacy receipts): in `purchases`, in no money.
    package var unpricedPurchases: Int64
    /// The subscriptions report's subscribers now (the live count, not the range's).
    package var subscribers: SubscriberSnapshot?

    package static let moneyNote =
        "money is Apple's customer price in milliunits of the row's currency (4990 is 4.99), never converted; not proceeds"

    /// `subscriberCells`: the live count of subscribers, which the subscriptions report adds.
    package init(_ query: ReportQuery, figures: [DayFigure], subscriberCells: [DayFigure]? = nil) {
        self.query = query
        subscribers = query.report == .subscriptions
            ? subscriberCells.map { SubscriberSnapshot(cells: $0, environment: query.environment, by: query.by) } : nil
        var rows: [RowID: Row] = [:]
        var totals: [RowID: Row] = [:]
        var reasons: Set<String> = []
        var unpriced: Int64 = 0
        let money = query.report != .subscriptions
        // Each figure's column, and each day's text, worked out once.
        var columnOf: [String: String?] = [:]
        var byReason: [String: Bool] = [:]
        var dayText: [Int64: String] = [:]
        for figure in figures where figure.environment == query.environment {
            if figure.name == "unpriced" { unpriced += figure.value }
            let known = columnOf[figure.name] ?? {
                let column = Self.column(of: figure.name, in: query.report)
                columnOf[figure.name] = column
                return column
            }()
            guard let column = known else { continue }
            if byReason[column] ?? {
                let found = Self.isByReason(column)
                byReason[column] = found
                return found
            }() { reasons.insert(column) }
            let key: String
            if query.by == .day {
                key = dayText[figure.day.number] ?? {
                    let text = figure.day.description
                    dayText[figure.day.number] = text
                    return text
                }()
            } else {
                key = Self.key(of: figure, by: query.by)
            }
            let currency: String? = money || query.by == .currency ? (figure.currency.isEmpty ? nil : figure.currency) : nil
            Self.add(figure.value, to: column, key: key, currency: currency, in: &rows)
            Self.add(figure.value, to: column, key: "", currency: money ? currency : nil, in: &totals)
        }
        columns = Self.columns(of: query.report) + reasons.sorted()
        self.rows = Self.finished(rows, report: query.report)
        self.totals = Self.finished(totals, report: query.report)
        unpricedPurchases = unpriced
    }

    /// The columns every row of a report has, in order (a subscriptions report adds
    /// `expired_<reason>` for each reason seen, and by the retention rule that answered Apple's
    /// real-time request `retention_offered_<rule>` and `retention_saved_<rule>`; a refunds report `refund_requests_<reason>`,
    /// `refunded_after_request_<reason>` and `declined_after_request_<reason>`, and by the refund rule
    /// that answered: `answered_by_rule_<rule>`, `refunded_by_rule_<rule>`, `declined_by_rule_<rule>`).
    package static func columns(of report: ReportQuery.Report) -> [String] {
        switch report {
        case .revenue:
            ["purchases", "units", "gross_milliunits", "refunds", "refunds_milliunits", "reinstated_milliunits", "net_milliunits",
             "unpriced_purchases", "family_shared", "adopted"]
        case .subscriptions:
            ["subscriptions_started", "trials_started", "trial_conversions", "renewals", "billing_issues", "billing_recoveries", "expired"]
        case .refunds:
            ["refund_requests", "refunds", "refunded_units", "refunds_milliunits", "refunds_unpriced", "reinstated",
             "reinstated_milliunits", "refunds_declined"]
        }
    }

    /// The column a counted figure adds to in a report; `nil` for one the report does not show.
    static func column(of name: String, in report: ReportQuery.Report) -> String? {
        let renamed: String
        switch name {
        case "gross": renamed = "gross_milliunits"
        case "refunds_gross": renamed = "refunds_milliunits"
        case "reinstated_gross": renamed = "reinstated_milliunits"
        case "unpriced": renamed = "unpriced_purchases"
        default:
            if let colon = name.firstIndex(of: ":") {
                let figure = name[..<colon]
                guard byReason[report]?.contains(where: { $0 == figure }) == true else { return nil }
                return figure + "_" + name[name.index(after: colon)...]
            }
            renamed = name
        }
        return columns(of: report).contains(renamed) ? renamed : nil
    }

    /// The figures counted by a reason (`<figure>:<reason>`) each report shows as a column a
    /// reason (`<figure>_<reason>`): why subscriptions expired, why customers asked for refunds and
    /// what Apple then did.
    static let byReason: [ReportQuery.Report: [String]] = [
        .subscriptions: ["expired", "retention_offered", "retention_saved"],
        .refunds: ["refund_requests", "refunded_after_request", "declined_after_request", "answered_by_rule", "refunded_by_rule",
                   "declined_by_rule"],
    ]

    private static func isByReason(_ column: String) -> Bool {
        byReason.values.contains { $0.contains { column.hasPrefix($0 + "_") } }
    }

    private static func key(of figure: DayFigure, by grouping: ReportQuery.Grouping) -> String {
        switch grouping {
        case .day: figure.day.description
        case .product: figure.product
        case .storefront: figure.storefront
        case .currency: figure.currency
        }
    }

    /// What a row is of.
    struct RowID: Hashable {
        var key: String
        var currency: String?
    }

    private static func add(_ value: Int64, to column: String, key: String, currency: String?, in rows: inout [RowID: Row]) {
        let id = RowID(key: key, currency: currency)
        rows[id, default: Row(key: key, currency: currency, figures: [:])].figures[column, default: 0] += value
        if column.hasPrefix("expired_") { rows[id]!.figures["expired", default: 0] += value }
    }

    /// The rows in order (by key, then currency, no currency last), each with every column and
    /// a revenue row's net.
    private static func finished(_ rows: [RowID: Row], report: ReportQuery.Report) -> [Row] {
        rows.values.map { row in
            var row = row
            for column in columns(of: report) where row.figures[column] == nil { row.figures[column] = 0 }
            if report == .revenue {
                row.figures["net_milliunits"] = row["gross_milliunits"] - row["refunds_milliunits"] + row["reinstated_milliunits"]
            }
            return row
        }.sorted { ($0.key, $0.currency ?? "\u{10FFFF}") < ($1.key, $1.currency ?? "\u{10FFFF}") }
    }

    /// The report as the API answers it.
    package var json: JSONValue {
        func object(_ row: Row, total: Bool) -> JSONValue {
            var members: JSONObject = [:]
            if !total {
                let name = switch query.by {
                case .day: "day"
                case .product: "product_id"
                case .storefront: "storefront"
                case .currency: "currency"
                }
                members[name] = row.key.isEmpty && query.by != .day ? .null : .string(row.key)
            }
            if query.report != .subscriptions || query.by == .currency { members["currency"] = row.currency.map(JSONValue.string) ?? .null }
            for column in columns { members[column] = .number(String(row[column])) }
            return .object(members)
        }
        return .members([
            "report": .string(query.report.rawValue), "from": .string(query.from.description), "to": .string(query.to.description),
            "by": .string(query.by.rawValue), "environment": .string(query.environment), "columns": .array(columns.map(JSONValue.string)),
            "rows": .array(rows.map { object($0, total: false) }), "totals": .array(totals.map { object($0, total: true) }),
            "unpriced_purchases": .number(String(unpricedPurchases)), "money": .string(Self.moneyNote),
            "subscribers": subscribers?.json,
        ])
    }
}
