import IAPOperations
import PipelineCore

/// A currency's gross and refunds per day as an SVG bar chart, drawn on the server: rectangles
/// and text whose numbers Swift computes and the template writes as attributes (no script, no
/// style attribute: the console's CSP stays as it is). Each bar has a `<title>` saying its day
/// and amounts, for a pointer and a screen reader.
enum BusinessChart {
    static let width = 720.0
    static let height = 160.0
    /// The currencies charted: the three with the most purchases (amounts in different currencies
    /// do not compare).
    static let most = 3

    static func charts(_ byDay: BusinessReport, from: FigureDay, to: FigureDay) -> [[String: Any]] {
        var byCurrency: [String: [String: BusinessReport.Row]] = [:]
        for row in byDay.rows { if let currency = row.currency { byCurrency[currency, default: [:]][row.key] = row } }
        let totals = Dictionary(uniqueKeysWithValues: byDay.totals.compactMap { row in row.currency.map { ($0, row) } })
        let currencies = byCurrency.keys.sorted { (totals[$1]?["purchases"] ?? 0, $0) < (totals[$0]?["purchases"] ?? 0, $1) }
        return currencies.prefix(most).map { chart($0, days: byCurrency[$0]!, total: totals[$0], from: from, to: to) }
    }

    static func chart(_ currency: String, days: [String: BusinessReport.Row], total: BusinessReport.Row?, from: FigureDay, to: FigureDay) -> [String: Any] {
        let count = Int(to.number - from.number + 1)
        let peak = max(days.values.map { $0["gross_milliunits"] }.max() ?? 0, 1)
        let slot = width / Double(count)
        let bar = max(slot * 0.8, 1)
        func money(_ value: Int64) -> String { MoneyText.format(milliunits: value, currency: currency) }
        func scaled(_ value: Int64) -> Double { (Double(value) / Double(peak) * (height - 20)).rounded(toPlaces: 1) }
        var bars: [[String: Any]] = []
        for index in 0..<count {
            let day = from.advanced(by: Int64(index)).description
            guard let row = days[day] else { continue }
            let x = (Double(index) * slot).rounded(toPlaces: 1)
            let gross = scaled(row["gross_milliunits"]), refunds = scaled(row["refunds_milliunits"])
            bars.append([
                "x": x, "width": bar.rounded(toPlaces: 1), "grossY": (height - gross).rounded(toPlaces: 1), "grossHeight": gross,
                "refundsY": (height - refunds).rounded(toPlaces: 1), "refundsHeight": refunds,
                "label": "\(day): gross \(money(row["gross_milliunits"])), refunds \(money(row["refunds_milliunits"])), net \(money(row["net_milliunits"]))",
            ])
        }
        return [
            "currency": currency, "width": width, "height": height, "bars": bars, "peak": money(peak),
            "first": from.description, "last": to.description, "gross": money(total?["gross_milliunits"] ?? 0),
            "refunds": money(total?["refunds_milliunits"] ?? 0), "net": money(total?["net_milliunits"] ?? 0),
            "purchases": total?["purchases"] ?? 0, "refundCount": total?["refunds"] ?? 0,
            "summary": "\(currency) per day from \(from) to \(to): gross \(money(total?["gross_milliunits"] ?? 0)), "
                + "refunds \(money(total?["refunds_milliunits"] ?? 0)), net \(money(total?["net_milliunits"] ?? 0))",
        ]
    }
}

extension Double {
    func rounded(toPlaces places: Int) -> Double {
        let scale = [1.0, 10.0, 100.0][places]
        return (self * scale).rounded() / scale
    }
}
