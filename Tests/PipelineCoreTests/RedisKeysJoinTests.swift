import Testing

@testable import PipelineCore

/// `RedisKeys.join`: parts joined by colons into a string of exactly their size, whatever their
/// length or script; and the keys built with it spelled as they always were.
@Suite struct RedisKeysJoinTests {
    @Test(arguments: ["", "a", "iap", "{iap}", "iap:{b3.41}", "ünïcode-user-名前", String(repeating: "x", count: 300)])
    func joinsTwoOrThreePartsWithColons(part: String) {
        #expect(RedisKeys.join(part, "txn") == part + ":txn")
        #expect(RedisKeys.join(part, "txn", part) == part + ":txn:" + part)
        #expect(RedisKeys.join("iap", part, "") == "iap:" + part + ":")
        #expect(RedisKeys.join(part, "txn", part).utf8.count == 2 * part.utf8.count + 5)
    }

    @Test func keysInBucketsKeepTheirNames() {
        let keys = RedisKeys(prefix: "iap", layout: BucketLayout(count: 16))
        let bucket = keys.ofPurchase(originalTransactionID: "2000000123")
        #expect(keys.claim(unit: "1000", originalTransactionID: "2000000123") == "\(bucket.bucketPrefix):txn:1000")
        #expect(keys.owner(originalTransactionID: "2000000123") == "\(bucket.bucketPrefix):owner:2000000123")
        #expect(keys.inBucket(3).inflight(member: "grant:w-1") == "iap:{\(keys.layout.tags[3])}:inflight:grant:w-1")
        #expect(keys.inBucket(3).holds == "iap:{\(keys.layout.tags[3])}:held")
        #expect(keys.accountToken("tök") == "iap:account-token:tök")
    }
}
