import IAPStages
import PipelineCore
import RedisClient

extension PipelineStore {
    /// Every figure of `days`, each day's hash of every bucket summed (`HGETALL`s in pipelines of
    /// at most 512: a three-year range of one bucket is three round trips).
    package func figures(of days: [FigureDay]) async throws -> [DayFigure] {
        let buckets = keys.everyBucket
        let reads = days.flatMap { day in buckets.map { (day, $0.figures(day: day)) } }
        // A day's field of several buckets is one figure (with one bucket, every field is its own).
        struct Cell: Hashable {
            var day: Int64
            var field: String
        }
        var figures: [DayFigure] = []
        var at: [Cell: Int] = [:]
        for chunk in reads.chunked(512) {
            let replies = try await redis.pipeline(chunk.map { RedisCommand("HGETALL", $0.1) })
            for (read, reply) in zip(chunk, replies) {
                guard let items = reply.array else { throw RedisError.unexpectedReply("HGETALL \(read.1)") }
                for index in stride(from: 0, to: items.count - 1, by: 2) {
                    guard let field = items[index].string, let text = items[index + 1].string,
                        let figure = DayFigure(day: read.0, field: field, value: text)
                    else { continue }
                    guard buckets.count > 1 else {
                        figures.append(figure)
                        continue
                    }
                    let cell = Cell(day: read.0.number, field: field)
                    if let index = at[cell] {
                        figures[index].value += figure.value
                    } else {
                        at[cell] = figures.count
                        figures.append(figure)
                    }
                }
            }
        }
        return figures
    }

    /// The live count of subscribers (`subscribers`) of every bucket, summed: cells read as figures
    /// of no day (`SubscriberSnapshot`). One pipeline.
    package func subscriberCells() async throws -> [DayFigure] {
        let buckets = keys.everyBucket
        let replies = try await redis.pipeline(buckets.map { RedisCommand("HGETALL", $0.subscribers) })
        var cells: [String: DayFigure] = [:]
        for (bucket, reply) in zip(buckets, replies) {
            guard let items = reply.array else { throw RedisError.unexpectedReply("HGETALL \(bucket.subscribers)") }
            for index in stride(from: 0, to: items.count - 1, by: 2) {
                guard let field = items[index].string, let text = items[index + 1].string,
                    let cell = DayFigure(day: FigureDay(number: 0), field: field, value: text)
                else { continue }
                cells[field, default: DayFigure(
                    day: cell.day, name: cell.name, environment: cell.environment, storefront: cell.storefront, currency: cell.currency,
                    product: cell.product, value: 0)].value += cell.value
            }
        }
        return cells.keys.sorted().compactMap { cells[$0] }
    }
}
