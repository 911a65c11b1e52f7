import IAPSettings
import RedisClient

/// How the pipeline's keyspace is cut into buckets for Redis Cluster: a fixed number of buckets,
/// each one hash tag, whose slots are spread evenly over the 16,384 (bucket `b` of `n` sits in the
/// `b`-th of `n` equal slot ranges, so moving a range of slots moves whole buckets and a cluster of
/// `k` primaries with even ranges holds `n / k` buckets each).
///
/// A purchase's bucket comes from its original transaction id, so everything about one purchase
/// (claim, grant record, owner, refund marker, subscription, hold) shares a slot with the queues
/// and the fulfilment stream of that bucket, and one script stays the exactly-once step. A ticket
/// lives in the bucket its id names.
///
/// With one bucket there is no tag at all: the keys are exactly those of a deployment that has
/// never heard of buckets (`iap:fulfilment`, `iap:queue:verify`, …). The number cannot change
/// once data exists, short of a migration: every hash below is fixed for ever (`BucketLayoutTests`
/// pins them).
package struct BucketLayout: Sendable, Equatable {
    /// The most buckets a layout may have: each then still has 16 slots to find a tag in.
    package static let maxCount = Settings.maxBuckets

    package let count: Int
    /// Each bucket's hash tag, without braces (empty with one bucket).
    package let tags: [String]

    package init(count: Int) {
        precondition((1...Self.maxCount).contains(count), "a layout has 1 to \(Self.maxCount) buckets")
        self.count = count
        tags = count == 1 ? [""] : (0..<count).map { Self.tag(ofBucket: $0, of: count) }
    }

    /// The bucket of a purchase, by its grant unit's original transaction id.
    package func bucket(ofOriginalTransactionID id: String) -> Int { bucket(hashing: "otid:" + id) }

    /// The bucket a new submission's ticket (and its resubmission key) lives in, by the
    /// submission's digest: a resubmission lands where the first one did.
    package func bucket(ofDigest digest: String) -> Int { bucket(hashing: "digest:" + digest) }

    /// The bucket of a notification: its purchase's, by the original transaction id it is about;
    /// one about no transaction (a test notification, a summary) by its UUID.
    package func bucket(ofNotification uuid: String, originalTransactionID: String? = nil) -> Int {
        originalTransactionID.map(bucket(ofOriginalTransactionID:)) ?? bucket(hashing: "notification:" + uuid)
    }

    /// The bucket a ticket lives in: the one its id names (`<bucket>.<id>`), or for an id without
    /// one (issued before buckets, or with one bucket) the one its hash picks, which is where a
    /// migration puts it.
    package func bucket(ofTicket ticket: String) -> Int {
        if let dot = ticket.firstIndex(of: "."), let named = Int(ticket[..<dot]), (0..<count).contains(named) { return named }
        return bucket(hashing: "ticket:" + ticket)
    }

    /// A ticket id that names `bucket`: the id alone with one bucket (unchanged from before buckets).
    package func ticketID(_ id: String, inBucket bucket: Int) -> String {
        count == 1 ? id : "\(bucket).\(id)"
    }

    /// The slot of a bucket's keys on Redis Cluster.
    package func slot(ofBucket bucket: Int) -> Int { RedisClusterSlot.of("{\(tags[bucket])}") }

    private func bucket(hashing text: String) -> Int {
        count == 1 ? 0 : Int(Self.fnv1a(text) % UInt64(count))
    }

    /// FNV-1a, 64 bits: small, stable across platforms and releases (Swift's `Hasher` is seeded per process).
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// The first tag `b<bucket>.<i>` whose slot falls in the bucket's range of slots.
    static func tag(ofBucket bucket: Int, of count: Int) -> String {
        let low = bucket * RedisClusterSlot.count / count, high = (bucket + 1) * RedisClusterSlot.count / count
        var attempt = 0
        while true {
            let tag = "b\(bucket).\(attempt)"
            if (low..<high).contains(RedisClusterSlot.of("{\(tag)}")) { return tag }
            attempt += 1
        }
    }
}
