import ClusterHarness
import Foundation

/// The drill's printed result: one row per trial and a total.
package enum DrillTable {
    package static func render(_ reports: [TrialReport], faults: [FaultKind]) -> String {
        // Next to the SIGTERM count: the jobs those processes held when signalled.
        let termHeld = faults.contains(.sigterm)
        let faultColumns = faults.map(\.column) + (termHeld ? ["term jobs"] : [])
        // Beside the failovers: the longest wait for a new primary and for the first grant after a kill.
        let failovers = faults.contains(.failover)
        let failoverColumns = failovers ? ["promoted s", "kill→grant s"] : []
        func longest(_ reports: [TrialReport]) -> [String] {
            guard failovers else { return [] }
            let timings = reports.flatMap(\.failovers)
            // "none": failovers happened, but no grant came after any of them.
            return [
                timings.map(\.promotedSeconds).max().map { String(format: "%.1f", $0) } ?? "-",
                timings.compactMap(\.firstGrantSeconds).max().map { String(format: "%.1f", $0) } ?? (timings.isEmpty ? "-" : "none"),
            ]
        }
        // Beside the reshards: the keys the longest move carried and how long it took.
        let reshards = faults.contains(.reshard)
        let reshardColumns = reshards ? ["moved keys", "move s"] : []
        func longestMove(_ reports: [TrialReport]) -> [String] {
            guard reshards else { return [] }
            let moves = reports.flatMap(\.reshards)
            guard let longest = moves.max(by: { $0.seconds < $1.seconds }) else { return ["-", "-"] }
            return ["\(moves.map(\.keys).max() ?? 0)", String(format: "%.1f", longest.seconds)]
        }
        let header = ["trial", "receipts", "accepted", "503s", "sk2", "refund rev/pre", "held", "subs/periods", "hooks/again", "notif/undeliv", "adopt/early"] + faultColumns + failoverColumns + reshardColumns
            + ["poison dl", "lost", "double", "stuck", "wrong", "anomalies", "drain s"]
        var rows = reports.map { report in
            ["\(report.trial)", "\(report.receipts)", "\(report.accepted)", "\(report.refusals)", "\(report.storeKit)",
             "\(report.refundsRevoked)/\(report.refundsBeforeGrant)", "\(report.held)", "\(report.subscriptions)/\(report.periods)",
             "\(report.webhookDelivered)/\(report.webhookRedelivered)", "\(report.notificationsSent)/\(report.notificationsUndelivered)",
             "\(report.adoptionPlayers)/\(report.grantedBeforeCutover)"]
                + faults.map { "\(report.faults[$0, default: 0])" } + (termHeld ? ["\(report.jobsHeldAtSigterm)"] : [])
                + longest([report]) + longestMove([report])
                + ["\(report.poisonDeadLettered)/\(report.poisonPushed)", "\(report.lost)", "\(report.doubleGrants)",
                   "\(report.stuck)", "\(report.wrongOutcomes)", "\(report.anomalies)", String(format: "%.1f", report.drainSeconds)]
        }
        func sum(_ value: (TrialReport) -> Int) -> String { "\(reports.map(value).reduce(0, +))" }
        rows.append(
            ["total", sum(\.receipts), sum(\.accepted), sum(\.refusals), sum(\.storeKit),
             "\(sum(\.refundsRevoked))/\(sum(\.refundsBeforeGrant))", sum(\.held), "\(sum(\.subscriptions))/\(sum(\.periods))",
             "\(sum(\.webhookDelivered))/\(sum(\.webhookRedelivered))", "\(sum(\.notificationsSent))/\(sum(\.notificationsUndelivered))",
             "\(sum(\.adoptionPlayers))/\(sum(\.grantedBeforeCutover))"]
                + faults.map { kind in sum { $0.faults[kind, default: 0] } } + (termHeld ? [sum(\.jobsHeldAtSigterm)] : [])
                + longest(reports) + longestMove(reports)
                + ["\(sum(\.poisonDeadLettered))/\(sum(\.poisonPushed))", sum(\.lost), sum(\.doubleGrants), sum(\.stuck),
                   sum(\.wrongOutcomes), sum(\.anomalies), String(format: "%.1f", reports.map(\.drainSeconds).max() ?? 0)])
        var text = [TextTable.render(header: header, rows: rows, rulesBefore: [rows.count - 1])]
        for report in reports where !report.examples.isEmpty {
            text.append("trial \(report.trial):")
            text += report.examples.map { "  \($0)" }
        }
        return text.joined(separator: "\n")
    }
}
