import PipelineCore
import PlainJSON
import RedisClient

/// Where each webhook destination's delivery stands (`iapctl webhooks`), every bucket summed:
/// entries of the fulfilment stream its group has not routed yet (`lag`), routed but not yet
/// acknowledged by the routing step (`pending`), users with a delivery job (their busy set), how
/// far it has routed (`last_routed_at`, the latest bucket's) and whether it is registered in
/// `webhook:destinations` (where erasure and the user's events find it; the default is not).
package struct WebhookDestinationStatus: Sendable, Equatable {
    package var destination: String
    package var group: String
    /// `nil` when Redis cannot tell (a group whose entries were trimmed past: `XINFO GROUPS`' nil lag).
    package var lag: Int64?
    package var pending: Int64
    package var usersWaiting: Int64
    package var lastRoutedAt: Int64?
    package var registered: Bool

    package var json: JSONValue {
        .members([
            "destination": .string(destination), "group": .string(group), "lag": lag.map { .int($0) } ?? .null,
            "pending": .int(pending), "users_waiting": .int(usersWaiting), "last_routed_at": lastRoutedAt.map { .int($0) } ?? .null,
            "registered": .bool(registered),
        ])
    }
}

extension PipelineStore {
    /// Every consumer group of every bucket's fulfilment stream that delivers to a destination
    /// (`webhook`, `webhook:<name>`), and every registered destination, summed over the buckets.
    package func webhookDestinationStatus() async throws -> [WebhookDestinationStatus] {
        var found: [String: WebhookDestinationStatus] = [:]
        for bucket in keys.everyBucket {
            var groups = RedisCommand("XINFO", "GROUPS", bucket.fulfilment)
            groups.routingKey = Array(bucket.fulfilment.utf8)
            let replies = try await redis.pipeline([groups, RedisCommand("SMEMBERS", bucket.webhookDestinations)])
            var names = Set(replies[1].array?.compactMap(\.string) ?? [])
            let registered = names
            for group in replies[0].array ?? [] {
                let fields = Self.pairs(group)
                guard let name = fields["name"]?.string, let destination = RedisKeys.webhookDestination(ofGroup: name) else { continue }
                names.insert(destination)
                var status = found[destination] ?? .init(
                    destination: destination, group: name, lag: 0, pending: 0, usersWaiting: 0, lastRoutedAt: nil, registered: false)
                status.lag = fields["lag"]?.int.flatMap { lag in status.lag.map { $0 + lag } }
                status.pending += fields["pending"]?.int ?? 0
                if let last = fields["last-delivered-id"]?.string, let ms = Int64(last.prefix { $0 != "-" }), ms > 0 {
                    status.lastRoutedAt = max(status.lastRoutedAt ?? 0, ms)
                }
                found[destination] = status
            }
            for destination in names {
                var status = found[destination] ?? .init(
                    destination: destination, group: RedisKeys.webhookGroup(to: destination), lag: nil, pending: 0, usersWaiting: 0,
                    lastRoutedAt: nil, registered: false)
                status.registered = status.registered || registered.contains(destination)
                status.usersWaiting += try await redis.send("SCARD", bucket.webhookBusy(to: destination)).int ?? 0
                found[destination] = status
            }
        }
        return found.values.sorted { $0.destination < $1.destination }
    }

    /// A reply of name, value pairs as a dictionary.
    private static func pairs(_ reply: RedisReply) -> [String: RedisReply] {
        guard let items = reply.array else { return [:] }
        var fields: [String: RedisReply] = [:]
        for index in stride(from: 0, to: items.count - 1, by: 2) {
            if let name = items[index].string { fields[name] = items[index + 1] }
        }
        return fields
    }
}
