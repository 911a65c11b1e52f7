import PipelineCore
import RedisClient

/// A month's figures summed once it is over, so a long report reads a dozen hashes instead of
/// hundreds of days (`figures:<YYYY-MM>`, bucket 0's, made by the first report that needs it).
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

    /// The months a range covers whole that ended at least two days before `today` (each a list
    /// of its days), and the range's other days.
    static func split(_ days: [FigureDay], today: FigureDay) -> (months: [[FigureDay]], rest: [FigureDay]) {
        var months: [[FigureDay]] = []
        var rest: [FigureDay] = []
        var index = 0
        while index < days.count {
            let day = days[index]
            let month = day.description.prefix(7)
            var end = index
            while end + 1 < days.count, days[end + 1].description.prefix(7) == month { end += 1 }
            let run = Array(days[index...end])
            let whole = day.description.hasSuffix("-01") && run.last?.advanced(by: 1).description.hasSuffix("-01") == true
            if whole, let last = run.last, last.advanced(by: 2) <= today { months.append(run) } else { rest += run }
            index = end + 1
        }
        return (months, rest)
    }

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
        let (months, rest) = FigureRollup.split(days, today: FigureDay(milliseconds: now))
        let raw = try await figures(of: rest)
        var read = FigureRollup.Read(byDay: raw, byCell: raw)
        let home = keys.inBucket(0)
        let replies = try await redis.pipeline(months.map { RedisCommand("HGETALL", home.figures(month: String($0[0].description.prefix(7)))) })
        for (month, reply) in zip(months, replies) {
            let first = month[0]
            if case .error(let message) = reply { throw RedisError.server(message) }
            if let rolled = FigureRollup.read(reply.stringDictionary, month: first) {
                read.byDay += rolled.byDay
                read.byCell += rolled.byCell
                continue
            }
            let figures = try await figures(of: month)
            read.byDay += figures
            read.byCell += figures
            let fields = FigureRollup.fields(of: figures, month: first)
            let write = fields.sorted { $0.key < $1.key }.flatMap { [$0.key, String($0.value)] } + ["_complete", "1"]
            _ = try await redis.send(RedisCommand(["HSET", home.figures(month: String(first.description.prefix(7)))] + write)).checked()
        }
        return read
    }
}
