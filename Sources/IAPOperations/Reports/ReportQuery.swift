import PipelineCore

/// What a business report is asked for: `GET /v1/reports/{report}?from=&to=&by=&environment=` and
/// `iapctl report REPORT`, checked once here for both. Days are UTC; the range is whole days,
/// both ends included.
package struct ReportQuery: Sendable, Equatable {
    package enum Report: String, Sendable, CaseIterable {
        case revenue, subscriptions, refunds
    }

    /// What each row of the report is one of.
    package enum Grouping: String, Sendable, CaseIterable {
        case day, product, storefront, currency
    }

    package var report: Report
    package var from: FigureDay
    package var to: FigureDay
    package var by: Grouping
    /// `Production` (the default) or `Sandbox`: the two are never summed together.
    package var environment: String

    /// The longest range a report reads: three years of days.
    package static let longestRange: Int64 = 3 * 366
    /// The range when none is given: the last 30 days, today included.
    package static let defaultDays: Int64 = 30
    package static let environments = ["Production", "Sandbox"]

    /// Why a query cannot be answered: a machine-readable `code` and a sentence.
    package struct Invalid: Error, Equatable, Sendable {
        package var code: String
        package var message: String
    }

    /// Reads a query from its text; `today` is the day a missing `to` means.
    package init(
        report: String, from: String?, to: String?, by: String?, environment: String?, today: FigureDay
    ) throws(Invalid) {
        guard let report = Report(rawValue: report) else {
            throw Invalid(code: "unknown_report", message: "the report must be one of \(Report.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let grouping = try Self.grouping(by)
        let end = try Self.day(to, name: "to") ?? today
        let start = try Self.day(from, name: "from") ?? end.advanced(by: 1 - Self.defaultDays)
        guard start <= end else {
            throw Invalid(code: "invalid_range", message: "from (\(start)) is after to (\(end))")
        }
        guard end.number - start.number < Self.longestRange else {
            throw Invalid(code: "range_too_long", message: "a report covers at most \(Self.longestRange) days (three years)")
        }
        let environment = environment ?? "Production"
        guard Self.environments.contains(environment) else {
            throw Invalid(code: "invalid_environment", message: "environment must be Production or Sandbox")
        }
        self.init(report: report, from: start, to: end, by: grouping, environment: environment)
    }

    package init(report: Report, from: FigureDay, to: FigureDay, by: Grouping, environment: String = "Production") {
        self.report = report
        self.from = from
        self.to = to
        self.by = by
        self.environment = environment
    }

    /// Every day of the range, in order.
    package var days: [FigureDay] { (from.number...to.number).map(FigureDay.init(number:)) }

    private static func grouping(_ text: String?) throws(Invalid) -> Grouping {
        guard let text else { return .day }
        guard let grouping = Grouping(rawValue: text) else {
            throw Invalid(code: "invalid_by", message: "by must be one of \(Grouping.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return grouping
    }

    private static func day(_ text: String?, name: String) throws(Invalid) -> FigureDay? {
        guard let text else { return nil }
        guard let day = FigureDay(text) else {
            throw Invalid(code: "invalid_date", message: "\(name) must be a UTC day, YYYY-MM-DD")
        }
        return day
    }
}
