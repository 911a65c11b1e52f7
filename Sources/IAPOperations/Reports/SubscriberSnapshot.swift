import PipelineCore
import PlainJSON

/// Who is a subscriber now and what they pay a month: the live count every subscription's step
/// keeps (`subscribers`, `count_subscriber.lua`), summed over the buckets, as rows by product,
/// storefront or currency (each of a currency: money is never added across currencies) and a
/// total per currency. `mrr_milliunits` is an estimate: each subscriber's latest period's price as
/// a month's (Apple's customer price, not proceeds). What the subscriptions report adds.
package struct SubscriberSnapshot: Sendable, Equatable {
    package static let columns = ["active", "trials", "mrr_milliunits"]
    package static let note =
        "subscribers now (status active or grace_period); mrr_milliunits estimates what they pay a month: each one's latest "
        + "period's price as a month's, in its currency (never converted), not proceeds"

    package var by: ReportQuery.Grouping
    package var rows: [BusinessReport.Row]
    package var totals: [BusinessReport.Row]

    /// From the live cells (`<figure>|<environment>|<storefront>|<currency>|<product>`, read as
    /// figures of no day) of `environment`; by day means by currency (there is only now).
    package init(cells: [DayFigure], environment: String, by grouping: ReportQuery.Grouping) {
        by = grouping == .day ? .currency : grouping
        var rows: [BusinessReport.RowID: BusinessReport.Row] = [:]
        var totals: [BusinessReport.RowID: BusinessReport.Row] = [:]
        for cell in cells where cell.environment == environment {
            guard let column = ["active": "active", "trials": "trials", "mrr": "mrr_milliunits"][cell.name] else { continue }
            let currency = cell.currency.isEmpty ? nil : cell.currency
            let key = switch by {
            case .product: cell.product
            case .storefront: cell.storefront
            case .currency, .day: cell.currency
            }
            Self.add(cell.value, to: column, id: .init(key: key, currency: currency), in: &rows)
            Self.add(cell.value, to: column, id: .init(key: "", currency: currency), in: &totals)
        }
        self.rows = Self.sorted(rows)
        self.totals = Self.sorted(totals)
    }

    private static func add(_ value: Int64, to column: String, id: BusinessReport.RowID, in rows: inout [BusinessReport.RowID: BusinessReport.Row]) {
        rows[id, default: .init(key: id.key, currency: id.currency, figures: Dictionary(uniqueKeysWithValues: columns.map { ($0, 0) }))]
            .figures[column, default: 0] += value
    }

    private static func sorted(_ rows: [BusinessReport.RowID: BusinessReport.Row]) -> [BusinessReport.Row] {
        rows.values.filter { $0["active"] != 0 || $0["mrr_milliunits"] != 0 }
            .sorted { ($0.key, $0.currency ?? "\u{10FFFF}") < ($1.key, $1.currency ?? "\u{10FFFF}") }
    }

    /// The `subscribers` member of the subscriptions report.
    package var json: JSONValue {
        func object(_ row: BusinessReport.Row, total: Bool) -> JSONValue {
            var members: JSONObject = ["currency": row.currency.map(JSONValue.string) ?? .null]
            if !total, by != .currency {
                members[by == .product ? "product_id" : "storefront"] = row.key.isEmpty ? .null : .string(row.key)
            }
            for column in Self.columns { members[column] = .number(String(row[column])) }
            return .object(members)
        }
        return .object([
            "by": .string(by.rawValue), "columns": .array(Self.columns.map(JSONValue.string)),
            "rows": .array(rows.map { object($0, total: false) }), "totals": .array(totals.map { object($0, total: true) }),
            "note": .string(Self.note),
        ])
    }
}
