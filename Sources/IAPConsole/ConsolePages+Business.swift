import IAPOperations
import PipelineCore

/// The Business page (`/business?days=30|90|365&environment=`): revenue, refunds and net per day
/// as a chart per currency, subscribers' starts, trials, renewals and churn by reason, the top
/// products and storefronts; every figure from the days' figures (`figures:<day>`, one read of
/// the range), every amount written for people.
extension ConsolePages {
    /// The windows the page offers, in days.
    static let businessWindows = [30, 90, 365]
    /// Who sees the page: `finance` (and nothing else), operators and admins.
    static func seesBusiness(_ role: ConsoleRole) -> Bool { role == .finance || role >= .operator }

    func business(days: Int, environment: String, now: Int64 = currentTimeMs()) async throws -> [String: Any] {
        let to = FigureDay(milliseconds: now)
        let from = to.advanced(by: Int64(1 - days))
        let figures = try await store.reportFigures(of: ReportQuery(report: .revenue, from: from, to: to, by: .day).days, now: now)
        let cells = try await store.subscriberCells()
        func report(_ name: ReportQuery.Report, by: ReportQuery.Grouping) -> BusinessReport {
            BusinessReport(ReportQuery(report: name, from: from, to: to, by: by, environment: environment), figures: figures.figures(by: by))
        }
        let byDay = report(.revenue, by: .day)
        let subscriptions = report(.subscriptions, by: .currency).totals.first
        let churn = Self.churn(subscriptions)
        let now = Self.subscribersNow(SubscriberSnapshot(cells: cells, environment: environment, by: .currency))
        let refunds = report(.refunds, by: .currency).totals
        let requests = Self.refundRequests(refunds), answers = Self.refundAnswers(refunds)
        let retention = Self.retentionAnswers(report(.subscriptions, by: .currency).totals)
        let products = Self.top(report(.revenue, by: .product)), storefronts = Self.top(report(.revenue, by: .storefront))
        return [
            "title": "Business", "from": from.description, "to": to.description, "environment": environment,
            "windows": Self.businessWindows.map { ["label": "\($0) days", "href": ConsolePaths.business(days: $0, environment: environment), "current": $0 == days] },
            "environments": ReportQuery.environments.map { ["label": $0, "href": ConsolePaths.business(days: days, environment: $0), "current": $0 == environment] },
            "charts": BusinessChart.charts(byDay, from: from, to: to),
            "subscriptions": Self.subscriptionLines(subscriptions),
            "churn": churn, "hasChurn": !churn.isEmpty, "now": now, "hasNow": !now.isEmpty,
            "requests": requests, "hasRequests": !requests.isEmpty, "answers": answers, "hasAnswers": !answers.isEmpty,
            "retention": retention, "hasRetention": !retention.isEmpty,
            "products": products, "hasProducts": !products.isEmpty, "storefronts": storefronts, "hasStorefronts": !storefronts.isEmpty,
            "unpriced": byDay.unpricedPurchases, "hasUnpriced": byDay.unpricedPurchases > 0,
            "note": "Apple's customer price, in each currency (never converted), not proceeds.",
            "iapctl": "iapctl report revenue --from \(from) --to \(to) --environment \(environment)",
        ]
    }

    /// The subscribers' figures of the window, each as a line.
    static func subscriptionLines(_ totals: BusinessReport.Row?) -> [[String: Any]] {
        [("subscriptions_started", "subscriptions started"), ("trials_started", "of them free trials"),
         ("trial_conversions", "trials converted to paid"), ("renewals", "renewals"), ("billing_issues", "into billing trouble"),
         ("billing_recoveries", "recovered from billing trouble"), ("expired", "expired")].map { ["label": $0.1, "key": $0.0, "value": totals?[$0.0] ?? 0] }
    }

    /// Subscribers now per currency, the estimated monthly revenue for people.
    static func subscribersNow(_ snapshot: SubscriberSnapshot) -> [[String: Any]] {
        snapshot.totals.map { row in
            [
                "currency": row.currency ?? "–", "active": row["active"], "trials": row["trials"],
                "mrr": row.currency.map { MoneyText.format(milliunits: row["mrr_milliunits"], currency: $0) } ?? "–",
            ]
        }
    }

    /// The window's refund requests by the customer's reason, and what Apple then did, most first
    /// (the totals of every currency: requests carry none).
    static func refundRequests(_ totals: [BusinessReport.Row]) -> [[String: Any]] {
        var byReason: [String: [Int64]] = [:]
        for row in totals {
            for (column, value) in row.figures where value > 0 {
                for (index, prefix) in ["refund_requests_", "refunded_after_request_", "declined_after_request_"].enumerated()
                where column.hasPrefix(prefix) {
                    byReason[String(column.dropFirst(prefix.count)), default: [0, 0, 0]][index] += value
                }
            }
        }
        return byReason.sorted { ($1.value[0], $0.key) < ($0.value[0], $1.key) }.map {
            ["reason": $0.key.replacingOccurrences(of: "_", with: " "), "requests": $0.value[0], "refunded": $0.value[1], "declined": $0.value[2]]
        }
    }

    /// The window's answers to refund requests by the rule that chose the preference (the
    /// catalog's, or `IAP_REFUND_PREFERENCE`), and what Apple then did, most first.
    static func refundAnswers(_ totals: [BusinessReport.Row]) -> [[String: Any]] {
        var byRule: [String: [Int64]] = [:]
        for row in totals {
            for (column, value) in row.figures where value > 0 {
                for (index, prefix) in ["answered_by_rule_", "refunded_by_rule_", "declined_by_rule_"].enumerated()
                where column.hasPrefix(prefix) {
                    byRule[String(column.dropFirst(prefix.count)), default: [0, 0, 0]][index] += value
                }
            }
        }
        return byRule.sorted { ($1.value[0], $0.key) < ($0.value[0], $1.key) }.map {
            ["rule": $0.key, "answered": $0.value[0], "refunded": $0.value[1], "declined": $0.value[2]]
        }
    }

    /// The window's answers to Apple's real-time retention requests by the rule that chose them
    /// (`none`: Apple's default message), the subscribers who then stayed (the first period bought
    /// after an answer), and the share, most answered first.
    static func retentionAnswers(_ totals: [BusinessReport.Row]) -> [[String: Any]] {
        var byRule: [String: [Int64]] = [:]
        for row in totals {
            for (column, value) in row.figures where value > 0 {
                for (index, prefix) in ["retention_offered_", "retention_saved_"].enumerated() where column.hasPrefix(prefix) {
                    byRule[String(column.dropFirst(prefix.count)), default: [0, 0]][index] += value
                }
            }
        }
        return byRule.sorted { ($1.value[0], $0.key) < ($0.value[0], $1.key) }.map {
            let share = $0.value[0] > 0 ? "\(($0.value[1] * 1000 / $0.value[0] + 5) / 10) %" : "–"
            return ["rule": $0.key, "answered": $0.value[0], "saved": $0.value[1], "share": share]
        }
    }

    /// Expiries by Apple's reason, most first.
    static func churn(_ totals: BusinessReport.Row?) -> [[String: Any]] {
        (totals?.figures ?? [:]).filter { $0.key.hasPrefix("expired_") && $0.value > 0 }
            .sorted { ($1.value, $0.key) < ($0.value, $1.key) }
            .map { ["reason": String($0.key.dropFirst("expired_".count)), "count": $0.value] }
    }

    /// The ten rows of a report with the most purchases (amounts in different currencies do not
    /// compare), money for people.
    static func top(_ report: BusinessReport) -> [[String: Any]] {
        report.rows.sorted { ($1["purchases"], $0.key) < ($0["purchases"], $1.key) }.prefix(10).map { row in
            let money = { (column: String) in row.currency.map { MoneyText.format(milliunits: row[column], currency: $0) } ?? "–" }
            return [
                "name": row.key.isEmpty ? "–" : row.key, "currency": row.currency ?? "–", "purchases": row["purchases"],
                "gross": money("gross_milliunits"), "refunds": money("refunds_milliunits"), "net": money("net_milliunits"),
            ]
        }
    }
}
