import IAPStages
import PipelineCore
import RedisClient

extension PipelineStore {
    /// Every figure of `days`, each day's hash of every bucket summed (`HGETALL`s in pipelines of
    /// at most 512: a three-year range of one bucket is three round trips).
    package func figures(of days: [FigureDay]) async throws -> [DayFigure] {
        let buckets = keys.everyBucket
        let reads = days.flatMap { day in buckets.map { (day, $0.figures(day: day)) } }
        var summed: [String: DayFigure] = [:]
        var order: [String] = []
        for chunk in reads.chunked(512) {
            let replies = try await redis.pipeline(chunk.map { RedisCommand("HGETALL", $0.1) })
            for (read, reply) in zip(chunk, replies) {
                guard let items = reply.array else { throw RedisError.unexpectedReply("HGETALL \(read.1)") }
                for index in stride(from: 0, to: items.count - 1, by: 2) {
                    guard let field = items[index].string, let text = items[index + 1].string,
                        let figure = DayFigure(day: read.0, field: field, value: text)
                    else { continue }
                    let id = "\(read.0)\u{0}\(field)"
                    if summed[id] == nil {
                        summed[id] = figure
                        order.append(id)
                    } else {
                        summed[id]!.value += figure.value
                    }
                }
            }
        }
        return order.map { summed[$0]! }
    }
}
