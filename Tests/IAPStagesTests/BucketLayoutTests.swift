import RedisClient
import Testing

@testable import IAPStages
@testable import PipelineCore

/// The bucket layout is part of the data: a purchase's bucket and a bucket's tag, once written,
/// must never change. These pin them.
struct BucketLayoutTests {
    @Test func withOneBucketEveryKeyKeepsTheNameItHadBeforeBuckets() {
        let keys = RedisKeys(prefix: "iap")
        #expect(keys.layout.count == 1 && keys.bucketPrefix == "iap")
        #expect(keys.queue(.verify) == "iap:queue:verify")
        #expect(keys.fulfilment == "iap:fulfilment")
        #expect(keys.claim(unit: "1000", originalTransactionID: "1000") == "iap:txn:1000")
        #expect(keys.grant(unit: "wol:7", originalTransactionID: "1000") == "iap:grant:wol:7")
        #expect(keys.ticket("AbC") == "iap:ticket:AbC")
        #expect(keys.lifetime(user: "u1") == "iap:lifetime:u1")
        #expect(keys.layout.bucket(ofOriginalTransactionID: "2000000123") == 0)
        #expect(keys.layout.ticketID("AbC", inBucket: 0) == "AbC")
    }

    @Test(arguments: [2, 3, 16, 64, 1024])
    func eachBucketsTagSitsInItsOwnEqualShareOfTheSlots(count: Int) {
        let layout = BucketLayout(count: count)
        for bucket in 0..<count {
            let slot = layout.slot(ofBucket: bucket)
            #expect(slot >= bucket * 16384 / count && slot < (bucket + 1) * 16384 / count, "bucket \(bucket): slot \(slot)")
        }
        #expect(Set(layout.tags).count == count)
    }

    @Test func aBucketsKeysShareOneSlotAndTheFleetsDoNot() {
        let layout = BucketLayout(count: 16)
        let keys = RedisKeys(prefix: "iap", layout: layout)
        for bucket in [0, 7, 15] {
            let inBucket = keys.inBucket(bucket)
            // A purchase of this bucket, a ticket naming it and a digest hashed to it.
            let original = try! #require((0..<10_000).map { "2000\($0)" }.first { layout.bucket(ofOriginalTransactionID: $0) == bucket })
            let digest = try! #require((0..<10_000).map { "d\($0)" }.first { layout.bucket(ofDigest: $0) == bucket })
            let ticket = layout.ticketID("AbCdEfGhIjKlMnOpQrStUv", inBucket: bucket)
            let slots = Set([
                inBucket.queue(.grant), inBucket.inflight(member: "grant:w1"), inBucket.workers, inBucket.retry, inBucket.dead,
                keys.claim(unit: "9", originalTransactionID: original), keys.grant(unit: "wol:9", originalTransactionID: original),
                inBucket.fulfilment, keys.ticket(ticket), keys.receipt(digest: digest), inBucket.results, keys.results(ofTicket: ticket),
                keys.owner(originalTransactionID: original), keys.refunded(unit: "9", originalTransactionID: original),
                keys.hold(unit: "9", originalTransactionID: original), keys.subscription(originalTransactionID: original),
                keys.notifications(originalTransactionID: original), inBucket.rechecks, inBucket.reaperLock,
                keys.ofPurchase(originalTransactionID: original).rechecks, inBucket.notification(uuid: "u"),
                // A user's indexes of the purchases in this bucket, and the bucket's holds and unclaimed.
                inBucket.lifetime(user: "u1"), inBucket.subscriptions(user: "u1"), inBucket.refunds(user: "u1"),
                inBucket.holds, inBucket.unclaimed, inBucket.webhookEvents(user: "u1"), inBucket.webhookBusy,
                keys.ticket(inBucket.webhookTicket(user: "u1")), keys.ticket(inBucket.webhookEventTicket(eventID: "1-0")),
            ].map(RedisClusterSlot.of))
            #expect(slots == [layout.slot(ofBucket: bucket)])
            #expect(inBucket.fulfilment == "iap:{\(layout.tags[bucket])}:fulfilment")
            // Whatever bucket the keys are of, a purchase's or a ticket's keys find their own.
            #expect(keys.inBucket((bucket + 1) % 16).claim(unit: "9", originalTransactionID: original) == keys.claim(unit: "9", originalTransactionID: original))
            #expect(keys.inBucket((bucket + 1) % 16).ticket(ticket) == keys.ticket(ticket))
        }
        // A user's own keys share the user's own tag, whatever the bucket; the fleet's are no bucket's.
        let user = [
            keys.dailyWindow(user: "u1", product: "gem"), keys.consent(user: "u1"), keys.rateWindow(user: "u1", second: 7),
        ]
        #expect(Set(user.map(RedisClusterSlot.of)) == [RedisClusterSlot.of("{u:u1}")])
        #expect(keys.consent(user: "u1") == "iap:{u:u1}:consent:u1")
        #expect(keys.inBucket(3).lifetime(user: "u1") == "iap:{\(layout.tags[3])}:lifetime:u1")
        #expect(RedisClusterSlot.of(keys.consent(user: "u2")) != RedisClusterSlot.of(keys.consent(user: "u1")))
        #expect(keys.inBucket(3).accountToken("t") == "iap:account-token:t")
    }

    /// Pinned: a change here moves purchases to other buckets, which a deployment's data forbids.
    @Test func theHashesAreFixedForEver() {
        #expect(BucketLayout.fnv1a("") == 0xcbf2_9ce4_8422_2325)
        #expect(BucketLayout.fnv1a("a") == 0xaf63_dc4c_8601_ec8c)
        let layout = BucketLayout(count: 16)
        #expect(Array(layout.tags.prefix(3)) == ["b0.2", "b1.1", "b2.61"])
        #expect(
            ["1000000000000001", "1000000000000002", "2000000987654321"].map(layout.bucket(ofOriginalTransactionID:)) == [13, 4, 14])
    }

    @Test func aTicketIDNamesItsBucketAndAnOldOneIsFoundByItsHash() {
        let layout = BucketLayout(count: 16)
        let id = layout.ticketID("AbCdEfGhIjKlMnOpQrStUv", inBucket: 11)
        #expect(id == "11.AbCdEfGhIjKlMnOpQrStUv")
        #expect(layout.bucket(ofTicket: id) == 11)
        let old = "AbCdEfGhIjKlMnOpQrStUv"
        #expect(layout.bucket(ofTicket: old) == layout.bucket(ofTicket: old) && (0..<16).contains(layout.bucket(ofTicket: old)))
        // A number that is not a bucket of this layout is not taken for one.
        #expect(layout.bucket(ofTicket: "99.AbC") == layout.bucket(ofTicket: "99.AbC") && layout.bucket(ofTicket: "99.AbC") < 16)
    }

    @Test func purchasesSpreadOverEveryBucket() {
        let layout = BucketLayout(count: 16)
        var counts = Array(repeating: 0, count: 16)
        for n in 0..<16_000 { counts[layout.bucket(ofOriginalTransactionID: String(2_000_000_000_000_000 + n))] += 1 }
        // 1,000 each on average: none below half of that or above one and a half.
        #expect(counts.allSatisfy { (500...1500).contains($0) }, "\(counts)")
    }
}

/// Two buckets' streams may give one entry id: a webhook event id names its bucket then.
@Suite struct BucketedEventIDTests {
    @Test func anEventIDNamesItsBucketWhenThereAreSeveralAndKeepsItsTime() {
        let one = BucketLayout(count: 1), four = BucketLayout(count: 4)
        #expect(WebhookEvent.id(entry: "1795507119056-0", bucket: 0, of: one) == "1795507119056-0")
        let a = WebhookEvent.id(entry: "1795507119056-0", bucket: 1, of: four)
        let b = WebhookEvent.id(entry: "1795507119056-0", bucket: 3, of: four)
        #expect(a == "1.1795507119056-0" && a != b)
        #expect(WebhookEvent(id: a, fields: [:]).createdAtMs == 1_795_507_119_056)
        #expect(WebhookEvent(id: "1795507119056-0", fields: [:]).createdAtMs == 1_795_507_119_056)
    }
}
