import IAPStages
import PipelineCore
import RedisClient

extension PipelineStore {
    /// One page of a bucket's grant records (`SCAN` from `cursor` over `grant:*`, asked of the node
    /// that holds the bucket, then one `HMGET` pipeline of `fields`): the next cursor (`0`: the
    /// bucket is read) and each record's values in the order of `fields`. What the recount and the
    /// export read the ledger with; `SCAN` returns each record at least once.
    package func grantRecords(
        in bucket: RedisKeys, after cursor: String, fields: [String], count: Int = 500
    ) async throws -> (next: String, records: [[String?]]) {
        let page = try await records(of: .grant, in: bucket, after: cursor, fields: fields, count: count)
        return (page.next, page.records.map(\.values))
    }

    /// One page of a bucket's records of `family` (`grant`, `subscription`), as `grantRecords`
    /// reads them, each with its key's name.
    package func records(
        of family: KeyFamily, in bucket: RedisKeys, after cursor: String, fields: [String], count: Int = 500
    ) async throws -> (next: String, records: [(name: String, values: [String?])]) {
        var scan = RedisCommand(
            "SCAN", cursor, "MATCH", RedisKeys.globEscaped(bucket.bucketPrefix) + ":\(family):*", "COUNT", String(count))
        scan.routingKey = Array(bucket.fulfilment.utf8)
        let page = try await redis.send(scan).checked().array ?? []
        guard page.count == 2, let next = page[0].string else { throw RedisError.unexpectedReply("SCAN") }
        let names = (page[1].array ?? []).compactMap(\.string)
        let replies = try await redis.pipeline(names.map { RedisCommand(["HMGET", $0] + fields) })
        return (next, zip(names, replies).map { ($0, ($1.array ?? []).map(\.string)) }.filter { $0.1.count == fields.count })
    }
}
