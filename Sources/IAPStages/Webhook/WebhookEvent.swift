import Foundation
import PipelineCore
import PlainJSON

/// One fulfilment stream entry as the webhook delivers it: `id` (the entry id, stable across
/// retries: the receiver's idempotency key; with several buckets the bucket, a dot and the entry
/// id, `3.1795507119056-0`, since two buckets' streams may give one id), `type` (the entry's
/// `event`), `created_at` (when it was added, from its id) and the entry's other fields, as one
/// JSON object.
package struct WebhookEvent: Sendable, Equatable {
    package var id: String
    package var fields: [String: String]

    package init(id: String, fields: [String: String]) {
        self.id = id
        self.fields = fields
    }

    /// Reads an entry of a user's delivery list (`{"id", "fields"}`, as `route_fulfilment_events` writes it).
    package init?(listEntry text: String) {
        guard let json = try? JSONValue(parsing: text), let id = json["id"]?.string, !id.isEmpty,
              let members = json["fields"]?.object
        else { return nil }
        self.id = id
        self.fields = members.compactMapValues(\.string)
    }

    /// The list entry again (for a dead letter's replay).
    package var listEntry: String {
        JSONValue.object(["id": .string(id), "fields": .object(fields.mapValues(JSONValue.string))]).canonicalText
    }

    /// When the stream took it (ms), from its id (`[<bucket>.]<ms>-<seq>`).
    package var createdAtMs: Int64 {
        let entry = id.split(separator: ".").last ?? ""
        return Int64(entry.split(separator: "-").first ?? "") ?? 0
    }

    /// The event id of a bucket's stream entry: the entry id with one bucket, else the bucket, a dot and the entry id.
    package static func id(entry: String, bucket: Int, of layout: BucketLayout) -> String {
        layout.ticketID(entry, inBucket: bucket)
    }

    /// The body the webhook receives: canonical JSON (sorted members), so its bytes and thus its
    /// signature are the same on every retry.
    package var body: [UInt8] {
        var members = fields.mapValues(JSONValue.string)
        // A notification's decoded members are JSON: the body carries them as an object.
        if let payload = fields["payload"], let parsed = try? JSONValue(parsing: payload) { members["payload"] = parsed }
        members.removeValue(forKey: "event")
        members["id"] = .string(id)
        members["type"] = .string(fields["event"] ?? "")
        members["created_at"] = .string(Self.iso8601(createdAtMs))
        return Array(JSONValue.object(members).canonicalText.utf8)
    }

    static func iso8601(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}
