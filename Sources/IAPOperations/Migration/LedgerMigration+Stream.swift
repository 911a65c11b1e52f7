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
        guard plan.names(.fulfilment).contains("fulfilment") else {
            report.add("fulfilment", source: 0, moved: 0, found: 0)
            return
        }
        let groups = try await streamGroups(stream, plan: plan)
        let watched = groups.reduce(into: Set<String>()) { $0.formUnion($1.undelivered) }
        let copied = try await copyEntries(of: stream, watching: watched)
        for group in groups { try await createGroup(group, bucketOf: copied.bucketOf) }
        let lengths = try await destination.pipeline(keys.everyBucket.map { RedisCommand("XLEN", $0.fulfilment) })
        report.add(
            "fulfilment", source: copied.read, moved: copied.written + copied.present,
            found: lengths.compactMap(\.int).reduce(0) { $0 + Int($1) },
            note: "\(groups.count) consumer groups" + (copied.present > 0 ? ", \(copied.present) entries there before" : ""))
    }

    /// What the names of a webhook group's users' lists start with: `webhook:events:` for the
    /// group `webhook`, `webhook:to:<name>:events:` for `webhook:<name>`; `nil`: not a webhook group.
    package static func webhookLists(ofGroup group: String) -> String? {
        let keys = RedisKeys()
        return RedisKeys.webhookDestination(ofGroup: group).map { destination in
            String(keys.webhookEvents(user: "", to: destination).dropFirst(keys.bucketPrefix.count + 1))
        }
    }

    /// A consumer group of the source stream: its position and the entries not yet delivered.
    struct StreamGroup {
        var name: String
        var last: String
        var undelivered: Set<String>
    }

    /// The source stream's groups, each with the entries pending in it (for the webhook group also
    /// those routed to a user's list and not delivered).
    private func streamGroups(_ stream: String, plan: Plan) async throws -> [StreamGroup] {
        var groups: [StreamGroup] = []
        var infoCommand = RedisCommand("XINFO", "GROUPS", stream)
        infoCommand.routingKey = Array(stream.utf8)
        for group in try await source.send(infoCommand).array ?? [] {
            let fields = group.stringDictionary
            guard let name = fields["name"], let last = fields["last-delivered-id"] else { continue }
            var undelivered = Set<String>()
            let pending = try await source.send("XPENDING", stream, name, "-", "+", "100000000").array ?? []
            for entry in pending { if let id = entry.array?.first?.string { undelivered.insert(id) } }
            // A webhook destination's group (`webhook`, `webhook:<name>`): its users' lists too.
            if let lists = Self.webhookLists(ofGroup: name) {
                for rest in plan.names(.webhook) where rest.hasPrefix(lists) {
                    for event in try await list(rest) {
                        let json = (try? JSONSerialization.jsonObject(with: Data(event.utf8))) as? [String: Any]
                        if let id = json?["id"] as? String { undelivered.insert(id) }
                    }
                }
            }
            groups.append(StreamGroup(name: name, last: last, undelivered: undelivered))
        }
        return groups
    }

    /// What copying the entries did: how many were read, written, already there, and the bucket
    /// each watched (undelivered) entry went to.
    struct CopiedEntries {
        var read = 0, written = 0, present = 0
        var bucketOf: [String: Int] = [:]
    }

    /// Copies every entry, in batches, to its purchase's bucket stream with its id.
    private func copyEntries(of stream: String, watching watched: Set<String>) async throws -> CopiedEntries {
        var copied = CopiedEntries()
        var start = "-", previous = 0
        while true {
            let entries = try await source.send("XRANGE", stream, start, "+", "COUNT", String(batch)).array ?? []
            if entries.isEmpty { break }
            var commands: [RedisCommand] = []
            for entry in entries {
                guard let parts = entry.array, parts.count == 2, let id = parts[0].string, let values = parts[1].array else { continue }
                let fields = values.compactMap(\.bytes)
                let bucket = bucket(ofEntry: fields) ?? previous
                previous = bucket
                if watched.contains(id) { copied.bucketOf[id] = bucket }
                commands.append(RedisCommand(bytes: [Array("XADD".utf8), Array(keys.inBucket(bucket).fulfilment.utf8), Array(id.utf8)] + fields))
                start = "(" + id
            }
            copied.read += entries.count
            for reply in try await destination.pipeline(commands) {
                if case .error(let message) = reply {
                    guard message.contains("equal or smaller") else { throw RedisError.server(message) }
                    copied.present += 1
                } else {
                    copied.written += 1
                }
            }
        }
        return copied
    }

    /// The bucket of the purchase an entry names (`original_transaction_id`); `nil`: it names none
    /// (it goes with the entry before it, written by the same step).
    private func bucket(ofEntry fields: [[UInt8]]) -> Int? {
        var bucket: Int?
        var index = 0
        while index + 1 < fields.count {
            if String(decoding: fields[index], as: UTF8.self) == "original_transaction_id" {
                let original = String(decoding: fields[index + 1], as: UTF8.self)
                if !original.isEmpty { bucket = keys.layout.bucket(ofOriginalTransactionID: original) }
            }
            index += 2
        }
        return bucket
    }

    /// The group on every bucket stream, at the source group's position or just before its first
    /// entry there still undelivered.
    private func createGroup(_ group: StreamGroup, bucketOf: [String: Int]) async throws {
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
