import Foundation

/// The drill's printed result: one row per trial and a total.
public enum DrillTable {
    public static func render(_ reports: [TrialReport], faults: [FaultKind]) -> String {
        let faultColumns = faults.map(\.column)
        let header = ["trial", "receipts", "accepted", "503s"] + faultColumns
            + ["poison dl", "lost", "double", "stuck", "wrong", "anomalies", "drain s"]
        var rows = reports.map { report in
            ["\(report.trial)", "\(report.receipts)", "\(report.accepted)", "\(report.refusals)"]
                + faults.map { "\(report.faults[$0, default: 0])" }
                + ["\(report.poisonDeadLettered)/\(report.poisonPushed)", "\(report.lost)", "\(report.doubleGrants)",
                   "\(report.stuck)", "\(report.wrongOutcomes)", "\(report.anomalies)", String(format: "%.1f", report.drainSeconds)]
        }
        func sum(_ value: (TrialReport) -> Int) -> String { "\(reports.map(value).reduce(0, +))" }
        rows.append(
            ["total", sum(\.receipts), sum(\.accepted), sum(\.refusals)]
                + faults.map { kind in sum { $0.faults[kind, default: 0] } }
                + ["\(sum(\.poisonDeadLettered))/\(sum(\.poisonPushed))", sum(\.lost), sum(\.doubleGrants), sum(\.stuck),
                   sum(\.wrongOutcomes), sum(\.anomalies), String(format: "%.1f", reports.map(\.drainSeconds).max() ?? 0)])
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { String(repeating: " ", count: $1 - $0.count) + $0 }.joined(separator: "  ")
        }
        var text = [line(header)] + rows.dropLast().map(line)
        text.append(String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1)))
        text.append(line(rows.last!))
        for report in reports where !report.examples.isEmpty {
            text.append("trial \(report.trial):")
            text += report.examples.map { "  \($0)" }
        }
        return text.joined(separator: "\n")
    }
}
