import IAPStages
import PipelineCore
import RedisClient

extension LedgerMigration {
    /// Every key copied is looked for where it went; every claim and grant record is compared
    /// with the source's; the jobs written are counted again.
    func verify(_ plan: Plan, report: inout MigrationReport) async throws {
        for family in Self.copied {
            let pairs = copies(of: family, plan)
            var found = 0, different = 0
            for chunk in pairs.chunked(batch) {
                let exists = try await destination.pipeline(chunk.map { RedisCommand("EXISTS", $0.1) })
                found += exists.filter { $0.int == 1 }.count
                guard family == .claim || family == .grant else { continue }
                let read = family == .claim ? "GET" : "HGETALL"
                let before = try await source.pipeline(chunk.map { RedisCommand(read, $0.0) })
                let after = try await destination.pipeline(chunk.map { RedisCommand(read, $0.1) })
                for (a, b) in zip(before, after) {
                    if family == .claim ? a != b : a.stringDictionary != b.stringDictionary { different += 1 }
                }
            }
            report.update(family.rawValue) {
                $0.found = found
                $0.different = different
            }
        }
        var jobs = 0
        let lengths = try await destination.pipeline(keys.everyBucket.flatMap { k in
            Stage.allCases.map { RedisCommand("LLEN", k.queue($0)) } + [RedisCommand("ZCARD", k.retry), RedisCommand("LLEN", k.dead)]
        })
        for reply in lengths { jobs += Int(reply.int ?? 0) }
        report.update("jobs") { $0.found = jobs }
    }

    /// Keys of families that are transient or rebuilt by the pipeline itself.
    static func skipped(_ plan: Plan) -> Int {
        KeyFamily.allCases.filter { treatment(of: $0) == .left }.reduce(0) { $0 + plan.names($1).count }
            + plan.names(.apple).filter { $0.hasPrefix("apple:permits:") }.count
            + plan.names(.ticket).filter { isDeliveryTicket(String($0.dropFirst("ticket:".count))) }.count
    }

    /// A user's delivery ticket (`webhook:<user>`, `webhook@<destination>:<user>`), whose job the
    /// webhook stage makes again when it routes the user's entries again.
    static func isDeliveryTicket(_ id: String) -> Bool { id.hasPrefix("webhook:") || id.hasPrefix("webhook@") }
}
