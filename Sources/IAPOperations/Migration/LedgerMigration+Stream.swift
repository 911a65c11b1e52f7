import Foundation
import IAPStages
import PipelineCore
import RedisClient

extension LedgerMigration {
    /// The fulfilment stream's entries, each to its purchase's bucket stream with its id (an
    /// entry naming no purchase goes with the entry before it, written by the same step), and
    /// each consumer group on every bucket stream, at the source group's position or just before
    /// its first entry there still undelivered (pending in the group; for the webhook group also
    /// routed to a user's list and not delivered).
    func copyStream(_ plan: Plan, report: inout MigrationReport) async throws {
        let stream = "\(sourcePrefix):fulfilment"
        guard plan.names("fulfilment").contains("fulfilment") else {
            report.add("fulfilment", source: 0, moved: 0, found: 0)
            return
        }
        // The groups, and the entries not yet delivered to each.
        var groups: [(name: String, last: String, undelivered: Set<String>)] = []
        var infoCommand = RedisCommand("XINFO", "GROUPS", stream)
        infoCommand.routingKey = Array(stream.utf8)
        for group in try await source.send(infoCommand).array ?? [] {
            let fields = group.stringDictionary
            guard let name = fields["name"], let last = fields["last-delivered-id"] else { continue }
            var undelivered = Set<String>()
            let pending = try await source.send("XPENDING", stream, name, "-", "+", "100000000").array ?? []
            for entry in pending { if let id = entry.array?.first?.string { undelivered.insert(id) } }
            if name == RedisKeys.webhookGroup {
                for rest in plan.names("webhook") where rest.hasPrefix("webhook:events:") {
                    for event in try await list(rest) {
                        let json = (try? JSONSerialization.jsonObject(with: Data(event.utf8))) as? [String: Any]
                        if let id = json?["id"] as? String { undelivered.insert(id) }
                    }
                }
            }
            groups.append((name, last, undelivered))
        }
        let watched = groups.reduce(into: Set<String>()) { $0.formUnion($1.undelivered) }
        var bucketOf: [String: Int] = [:]

        var start = "-", previous = 0, read = 0, written = 0, present = 0
        while true {
            let entries = try await source.send("XRANGE", stream, start, "+", "COUNT", String(batch)).array ?? []
            if entries.isEmpty { break }
            var commands: [RedisCommand] = []
            for entry in entries {
                guard let parts = entry.array, parts.count == 2, let id = parts[0].string, let values = parts[1].array else { continue }
                let fields = values.compactMap(\.bytes)
                var bucket = previous
                var index = 0
                while index + 1 < fields.count {
                    if String(decoding: fields[index], as: UTF8.self) == "original_transaction_id" {
                        let original = String(decoding: fields[index + 1], as: UTF8.self)
                        if !original.isEmpty { bucket = keys.layout.bucket(ofOriginalTransactionID: original) }
                    }
                    index += 2
                }
                previous = bucket
                if watched.contains(id) { bucketOf[id] = bucket }
                commands.append(RedisCommand(bytes: [Array("XADD".utf8), Array(keys.inBucket(bucket).fulfilment.utf8), Array(id.utf8)] + fields))
                start = "(" + id
            }
            read += entries.count
            for reply in try await destination.pipeline(commands) {
                if case .error(let message) = reply {
                    guard message.contains("equal or smaller") else { throw RedisError.server(message) }
                    present += 1
                } else {
                    written += 1
                }
            }
        }
        for group in groups {
            var first: [Int: String] = [:]
            for id in group.undelivered {
                guard let bucket = bucketOf[id] else { continue }
                if first[bucket].map({ Self.streamID(id, isBefore: $0) }) ?? true { first[bucket] = id }
            }
            for bucket in 0..<keys.layout.count {
                let key = keys.inBucket(bucket).fulfilment
                let position = first[bucket].map { id in
                    Self.streamID(id, isBefore: group.last) || id == group.last ? Self.streamID(before: id) : group.last
                } ?? group.last
                var create = RedisCommand("XGROUP", "CREATE", key, group.name, position, "MKSTREAM")
                create.routingKey = Array(key.utf8)
                if case .error(let message) = try await destination.execute(create) {
                    guard message.hasPrefix("BUSYGROUP") else { throw RedisError.server(message) }
                    var move = RedisCommand("XGROUP", "SETID", key, group.name, position)
                    move.routingKey = Array(key.utf8)
                    try await destination.send(move)
                }
            }
        }
        let lengths = try await destination.pipeline(keys.everyBucket.map { RedisCommand("XLEN", $0.fulfilment) })
        report.add(
            "fulfilment", source: read, moved: written + present, found: lengths.compactMap(\.int).reduce(0) { $0 + Int($1) },
            note: "\(groups.count) consumer groups" + (present > 0 ? ", \(present) entries there before" : ""))
    }

    /// Whether stream id `a` comes before `b`.
    static func streamID(_ a: String, isBefore b: String) -> Bool {
        let (x, y) = (parse(a), parse(b))
        return x.0 != y.0 ? x.0 < y.0 : x.1 < y.1
    }

    /// The greatest stream id before `id`.
    static func streamID(before id: String) -> String {
        let (ms, seq) = parse(id)
        if seq > 0 { return "\(ms)-\(seq - 1)" }
        return ms > 0 ? "\(ms - 1)-\(UInt64.max)" : "0-0"
    }

    private static func parse(_ id: String) -> (UInt64, UInt64) {
        let parts = id.split(separator: "-")
        return (UInt64(parts.first ?? "0") ?? 0, parts.count > 1 ? UInt64(parts[1]) ?? 0 : 0)
    }
}
