import Foundation
import IAPStages
import PipelineCore
import PlainJSON
import RedisClient

/// One of a user's fulfilment events as the bucket's `user-events` index keeps it (written with the
/// entry, `Lua/includes/append_event.lua`): what happened to which purchase, and whether the
/// backend's webhook has it. The index outlives the stream's trimming; the entry may be gone.
package struct UserEvent: Sendable, Equatable, Codable {
    /// The entry's id in its bucket's fulfilment stream (`<ms>-<seq>`).
    package var entryID: String
    package var bucket: Int
    package var event: String
    package var originalTransactionID: String
    package var unit: String
    package var productID: String
    /// `delivered`, `waiting` (not yet delivered to the webhook), or absent: no webhook reads the stream.
    package var delivery: String?

    enum CodingKeys: String, CodingKey {
        case entryID = "entry_id"
        case bucket, event
        case originalTransactionID = "original_transaction_id"
        case unit
        case productID = "product_id"
        case delivery
    }

    /// When the entry was written (ms, the id's first part: the writing primary's clock).
    package var at: Int64 { order.0 }

    /// The id's parts, for ordering entries of different buckets.
    var order: (Int64, Int64) { FulfilmentEntry.order(of: entryID) }

    /// What each member of `user`'s starts with: the user's length (3 digits), the user, NUL.
    static func prefix(of user: String) -> String { String(format: "%03d", user.utf8.count) + user + "\0" }

    /// A stream id padded as the index orders it (`<ms, 20 digits>-<seq, 20 digits>`); `nil` for
    /// anything but digits-dash-digits.
    static func padded(_ id: String) -> String? {
        let parts = id.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ (1...20).contains($0.count) && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } })
        else { return nil }
        return parts.map { String(repeating: "0", count: 20 - $0.count) + $0 }.joined(separator: "-")
    }

    /// The user and event a member of the index says (any user's); `nil` for another shape.
    package static func parse(member: String, bucket: Int) -> (user: String, event: UserEvent)? {
        guard let length = Int(member.prefix(3)), member.utf8.count > 3 + length else { return nil }
        let user = String(decoding: member.utf8.dropFirst(3).prefix(length), as: UTF8.self)
        return UserEvent(member: member, user: user, bucket: bucket).map { (user, $0) }
    }

    /// The event a member of `user`'s range says; `nil` for a member of another shape.
    init?(member: String, user: String, bucket: Int) {
        let prefix = Self.prefix(of: user)
        guard member.hasPrefix(prefix) else { return nil }
        let parts = member.dropFirst(prefix.count).split(separator: "\0", omittingEmptySubsequences: false)
        guard parts.count == 5 else { return nil }
        let id = parts[0].split(separator: "-").map { String($0.drop { $0 == "0" }) }.map { $0.isEmpty ? "0" : $0 }
        guard id.count == 2 else { return nil }
        entryID = id.joined(separator: "-")
        self.bucket = bucket
        event = String(parts[1])
        originalTransactionID = String(parts[2])
        unit = String(parts[3])
        productID = String(parts[4])
    }
}

extension PipelineStore {
    /// A page of `user`'s newest `limit` events written before `before` (an entry id, exclusive;
    /// `nil`: the newest), newest first, from every bucket's `user-events` (a page takes in every
    /// event of its last id read), each with its delivery to the webhook. Two round trips; the
    /// streams are not read.
    package func userEvents(of user: String, limit: Int = 50, before: String? = nil) async throws -> (events: [UserEvent], nextBefore: String?) {
        let prefix = UserEvent.prefix(of: user)
        let newest = before.flatMap(UserEvent.padded).map { "(" + prefix + $0 } ?? "(" + prefix.dropLast() + "\u{1}"
        let buckets = keys.everyBucket
        let replies = try await redis.pipeline(buckets.map {
            RedisCommand("ZRANGE", $0.userEvents, newest, "[" + prefix, "BYLEX", "REV", "LIMIT", "0", String(limit + 1))
        })
        var listed: [UserEvent] = []
        for (index, reply) in replies.enumerated() {
            listed += try reply.checked().array?.compactMap { $0.string.flatMap { UserEvent(member: $0, user: user, bucket: index) } } ?? []
        }
        listed.sort { ($0.order.0, $0.order.1, $0.bucket) > ($1.order.0, $1.order.1, $1.bucket) }
        var page = Array(listed.prefix(limit))
        while let last = page.last, page.count < listed.count, listed[page.count].order == last.order { page.append(listed[page.count]) }
        try await markDelivery(&page, of: user)
        return (page, page.count < listed.count ? page.last?.entryID : nil)
    }

    /// Each event's delivery: with webhook groups on its bucket's stream (one per destination),
    /// `delivered` when every group read past it and it is older than the head of the user's list
    /// still to deliver to that destination (an event a destination's filter turned away counts as
    /// delivered there).
    private func markDelivery(_ events: inout [UserEvent], of user: String) async throws {
        let buckets = Array(Set(events.map(\.bucket))).sorted()
        guard !buckets.isEmpty else { return }
        let all = keys.everyBucket
        let groupReplies = try await redis.pipeline(buckets.map { bucket -> RedisCommand in
            var groups = RedisCommand("XINFO", "GROUPS", all[bucket].fulfilment)
            groups.routingKey = Array(all[bucket].fulfilment.utf8)
            return groups
        })
        // Per bucket, each destination's group position: (bucket, destination, last read).
        var reads: [(bucket: Int, destination: String, read: String)] = []
        for (index, bucket) in buckets.enumerated() {
            // A stream not yet written answers an error: no group reads it.
            for group in groupReplies[index].array?.map(\.stringDictionary) ?? [] {
                guard let name = group["name"], let read = group["last-delivered-id"], let destination = RedisKeys.webhookDestination(ofGroup: name)
                else { continue }
                reads.append((bucket, destination, read))
            }
        }
        guard !reads.isEmpty else { return }
        let heads = try await redis.pipeline(reads.map { RedisCommand("LINDEX", all[$0.bucket].webhookEvents(user: user, to: $0.destination), "0") })
        var marks: [Int: [(read: String, head: String?)]] = [:]
        for (read, reply) in zip(reads, heads) {
            let head = try reply.checked().string.flatMap { text in
                (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["id"] as? String
            }
            // A delivery's id is the entry's, after the bucket's `<bucket>.` when there are several.
            marks[read.bucket, default: []].append((read.read, head.map { String($0.split(separator: ".").last ?? "") }))
        }
        for index in events.indices {
            guard let groups = marks[events[index].bucket] else { continue }
            let order = events[index].order
            let delivered = groups.allSatisfy { mark in
                let routed = order <= FulfilmentEntry.order(of: mark.read)
                let queued = mark.head.map { order >= FulfilmentEntry.order(of: $0) } ?? false
                return routed && !queued
            }
            events[index].delivery = delivered ? "delivered" : "waiting"
        }
    }
}

/// `index_user_events`: one page of a bucket's stream indexed in its `user-events` (see the script).
package struct IndexUserEvents: PipelineScript {
    package static let script = LuaSource.script("index_user_events")
    package let keys: [String]
    package let arguments: [String]

    /// The entries of `bucket`'s stream after `after` (an id, exclusive; `nil`: from the first), at most `count`.
    package init(_ bucket: RedisKeys, after: String?, count: Int) {
        keys = [bucket.fulfilment, bucket.userEvents]
        arguments = [JSONValue.object(["after": .string(after ?? "-"), "count": .int(Int64(count))]).canonicalText]
    }

    /// How many entries were read and the last one's id (`nil`: none).
    package static func decode(_ reply: RedisReply) throws -> (read: Int, last: String?) {
        guard let items = reply.array, items.count == 2, let read = items[0].int, let last = items[1].string else {
            throw ScriptReplyError(script: name, reply: reply)
        }
        return (Int(read), last.isEmpty ? nil : last)
    }
}

extension PipelineStore {
    /// Every bucket's fulfilment stream, `page` entries a step, indexed in its `user-events`
    /// (`iapctl user index-events`: entries written before the index existed). Harmless to repeat
    /// and to run beside the pipeline. Returns how many entries were read; `progress` hears each
    /// bucket's count as it finishes.
    package func indexUserEvents(page: Int = 500, progress: (Int, Int) -> Void = { _, _ in }) async throws -> Int {
        var total = 0
        for (index, bucket) in keys.everyBucket.enumerated() {
            var after: String?
            var read = 0
            repeat {
                let step = try await run(IndexUserEvents(bucket, after: after, count: page))
                read += step.read
                after = step.last ?? after
                if step.read < page { break }
            } while true
            progress(index, read)
            total += read
        }
        return total
    }
}
