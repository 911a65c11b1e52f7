import PipelineCore
import RedisClient

/// A month's figures summed once it is over, so a long report reads a dozen hashes instead of
/// hundreds of days (`figures:<YYYY-MM>`, bucket 0's, made by the first report that needs it);
/// and this month's days up to two days ago the same way (`figures:<YYYY-MM>:<DD>`, for three days).
/// A day's figures never change once the day is over (each is counted on the day of its step),
/// so a month that ended two days ago (a margin for a worker's clock) is summed for good. Two
/// sections: `c|<figure>|<environment>|<storefront>|<currency>|<product>` the month's cells (what
/// a report by product, storefront or currency reads) and `d<DD>|<figure>|<environment>||<currency>|`
/// each day's per currency (what a report by day reads), and `_complete` once written (one HSET).
package enum FigureRollup {
    /// What a report reads: each day's figures (raw days, or a month's day section) and the
    /// cells (raw days, or a month's cell section). Each sums to the same totals.
    package struct Read: Sendable, Equatable {
        package var byDay: [DayFigure] = []
        package var byCell: [DayFigure] = []

        /// The figures a report grouped `by` adds up.
        package func figures(by grouping: ReportQuery.Grouping) -> [DayFigure] { grouping == .day ? byDay : byCell }
    }

    /// What a range's days are read from: the months it covers whole that ended at least two days
    /// before `today`, each month's first days up to two days before `today` where the range
    /// covers them from the 1st but the month is not over (its month to date: a rollup of its own,
    /// `figures:<YYYY-MM>:<DD>`, kept three days), and the other days.
    static func split(_ days: [FigureDay], today: FigureDay) -> (months: [[FigureDay]], toDate: [[FigureDay]], rest: [FigureDay]) {
        var months: [[FigureDay]] = []
        var toDate: [[FigureDay]] = []
        var rest: [FigureDay] = []
        var index = 0
        while index < days.count {
            let day = days[index]
            let month = day.description.prefix(7)
            var end = index
            while end + 1 < days.count, days[end + 1].description.prefix(7) == month { end += 1 }
            let run = Array(days[index...end])
            let fromFirst = day.description.hasSuffix("-01")
            let over = run.prefix { $0.advanced(by: 2) <= today }
            if fromFirst, over.count == run.count, run.last?.advanced(by: 1).description.hasSuffix("-01") == true {
                months.append(run)
            } else if fromFirst, over.count >= 2 {
                toDate.append(Array(over))
                rest += run.dropFirst(over.count)
            } else {
                rest += run
            }
            index = end + 1
        }
        return (months, toDate, rest)
    }

    /// How long a month to date's rollup is kept: it serves the reports of its day and the next.
    static let toDateLifetime = 3 * 86_400

    /// The rollup's fields of a month's raw figures (summed over the buckets already).
    static func fields(of figures: [DayFigure], month first: FigureDay) -> [String: Int64] {
        var fields: [String: Int64] = [:]
        for figure in figures {
            fields["c|" + figure.field, default: 0] += figure.value
            let day = String(figure.day.number - first.number + 1 + 100).suffix(2)
            fields["d\(day)|\(figure.name)|\(figure.environment)||\(figure.currency)|", default: 0] += figure.value
        }
        return fields
    }

    /// A rollup's fields read back into both sections; `nil` when it is not complete.
    static func read(_ fields: [String: String], month first: FigureDay) -> Read? {
        guard fields["_complete"] != nil else { return nil }
        var read = Read()
        for (field, text) in fields {
            if field.hasPrefix("c|") {
                if let figure = DayFigure(day: first, field: String(field.dropFirst(2)), value: text) { read.byCell.append(figure) }
            } else if field.hasPrefix("d"), field.count > 4, let day = Int64(field.dropFirst().prefix(2)) {
                if let figure = DayFigure(day: first.advanced(by: day - 1), field: String(field.dropFirst(4)), value: text) {
                    read.byDay.append(figure)
                }
            }
        }
        return read
    }
}

extension PipelineStore {
    /// A report's figures over `days`: each whole month over (two days ago) from its rollup, made
    /// now from its days if it has none yet; the other days as they are.
    package func reportFigures(of days: [FigureDay], now: Int64 = currentTimeMs()) async throws -> FigureRollup.Read {
        let (months, toDate, rest) = FigureRollup.split(days, today: FigureDay(milliseconds: now))
        let raw = try await figures(of: rest)
        var read = FigureRollup.Read(byDay: raw, byCell: raw)
        // A whole month's rollup is `<YYYY-MM>`; a month to date's `<YYYY-MM>:<DD>`, its last day.
        let spans = months.map { ($0, String($0[0].description.prefix(7)), false) }
            + toDate.map { ($0, String($0[0].description.prefix(7)) + ":" + String($0[$0.count - 1].description.suffix(2)), true) }
        let home = keys.inBucket(0)
        let replies = try await redis.pipeline(spans.map { RedisCommand("HGETALL", home.figures(month: $0.1)) })
        for ((span, name, expires), reply) in zip(spans, replies) {
            let first = span[0]
            if case .error(let message) = reply { throw RedisError.server(message) }
            if let rolled = FigureRollup.read(reply.stringDictionary, month: first) {
                read.byDay += rolled.byDay
                read.byCell += rolled.byCell
                continue
            }
            let figures = try await figures(of: span)
            read.byDay += figures
            read.byCell += figures
            let fields = FigureRollup.fields(of: figures, month: first)
            let write = fields.sorted { $0.key < $1.key }.flatMap { [$0.key, String($0.value)] } + ["_complete", "1"]
            var commands = [RedisCommand(["HSET", home.figures(month: name)] + write)]
            if expires { commands.append(RedisCommand("EXPIRE", home.figures(month: name), String(FigureRollup.toDateLifetime))) }
            for reply in try await redis.pipeline(commands) { _ = try reply.checked() }
        }
        return read
    }
}
