import Crypto
import IAPOperations
import PipelineCore
import PlainJSON
import RedisClient

/// One bucket's dead letters, read a window at a time (`LLEN` and one `LRANGE`, never the whole
/// list). A page names an entry by the SHA-256 of its text (`digest`), never by the text, which
/// holds the job and so the evidence.
struct DeadLetterWindow: Sendable {
    static let size = 50
    /// How far a confirmation looks past where its preview saw the entries: new dead letters
    /// push older ones down the list meanwhile, by at most this many.
    static let drift = 1000

    let store: PipelineStore

    struct Entry: Sendable {
        let text: String
        /// `nil`: the entry does not decode (shown as such, never replayed).
        let letter: DeadLetter?
        var digest: String { Self.digest(text) }

        static func digest(_ text: String) -> String { Hex.encode(SHA256.hash(data: Array(text.utf8))) }
    }

    /// The bucket's dead-letter list; `nil` for a bucket that does not exist.
    func key(bucket: Int) -> String? {
        let buckets = store.keys.everyBucket
        return buckets.indices.contains(bucket) ? buckets[bucket].dead : nil
    }

    /// `count` entries from `start` (newest first) and how many the bucket holds.
    func read(bucket: Int, start: Int, count: Int = size) async throws -> (total: Int, entries: [Entry]) {
        guard let key = key(bucket: bucket), count > 0 else { return (0, []) }
        let replies = try await store.redis.pipeline([
            RedisCommand("LLEN", key), RedisCommand("LRANGE", key, String(start), String(start + count - 1)),
        ])
        for reply in replies { try reply.checked() }
        let entries = (replies[1].array ?? []).compactMap(\.string).map { Entry(text: $0, letter: try? DeadLetter.decode($0)) }
        return (Int(replies[0].int ?? 0), entries)
    }

    /// The entries a preview named by digest, as they stand now: looked for from a window before
    /// where the preview saw them to `drift` past it (the list grew by `total - seen` since), so
    /// the read stays bounded. Returns those found (each digest once per time it was named) and
    /// how many were not: replayed or purged meanwhile, or pushed further than the look reaches.
    func find(digests: [String], bucket: Int, start: Int, seen: Int) async throws -> (found: [Entry], missing: Int) {
        guard !digests.isEmpty, let key = key(bucket: bucket) else { return ([], digests.count) }
        let total = Int(try await store.redis.send("LLEN", key).checked().int ?? 0)
        let from = max(start - Self.size, 0)
        let grown = min(max(total - seen, 0), Self.drift)
        let (_, entries) = try await read(bucket: bucket, start: from, count: start - from + Self.size + grown)
        var wanted: [String: Int] = [:]
        for digest in digests { wanted[digest, default: 0] += 1 }
        var found: [Entry] = []
        for entry in entries {
            let digest = entry.digest
            guard let left = wanted[digest], left > 0 else { continue }
            wanted[digest] = left - 1
            found.append(entry)
        }
        return (found, digests.count - found.count)
    }
}
