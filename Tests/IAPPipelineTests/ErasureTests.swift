import AppleJWS
import Foundation
import IAPOperations
import IAPStages
import PipelineCore
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// `DELETE /v1/users/{id}`: an erased user leaves no trace of the person in Redis (no key, record
/// or stream entry names them), their purchases stay claimed under a pseudonym, so the same
/// purchase is never granted twice, and their record answers 410. On a real Cluster, whose
/// primaries refuse any step whose keys cross slots.
@Suite(.serialized) struct ErasureTests {
    static let user = "erase-me-7"

    /// Every place the user id is still written, on every primary: key names and what each holds.
    static func traces(of user: String, ports: [Int]) async throws -> [String] {
        var found: [String] = []
        for port in ports {
            let node = RedisClient(configuration: try RedisConfiguration(url: "redis://127.0.0.1:\(port)"), poolSize: 1)
            defer { Task { await node.close() } }
            var cursor = "0"
            repeat {
                let reply = try await node.send("SCAN", cursor, "COUNT", "1000")
                let parts = reply.array ?? []
                cursor = parts.first?.string ?? "0"
                for key in (parts.count > 1 ? parts[1].array ?? [] : []).compactMap(\.string) {
                    if key.contains(user) { found.append("key \(key)"); continue }
                    let kind = try await node.send("TYPE", key).string ?? ""
                    let dump: RedisReply
                    switch kind {
                    case "string": dump = try await node.send("GET", key)
                    case "hash": dump = try await node.send("HGETALL", key)
                    case "set": dump = try await node.send("SMEMBERS", key)
                    case "zset": dump = try await node.send("ZRANGE", key, "0", "-1")
                    case "list": dump = try await node.send("LRANGE", key, "0", "-1")
                    case "stream": dump = try await node.send("XRANGE", key, "-", "+")
                    default: continue
                    }
                    if "\(dump)".contains(user) { found.append("\(kind) \(key)") }
                }
            } while cursor != "0"
        }
        return found
    }

    @Test func anErasedUserLeavesNoTraceAndNoSecondGrantOnACluster() async throws {
        let nodes = try await RedisClusterNodes.start()
        defer { nodes.stop() }
        // Eight buckets over the three primaries: still a step per slot, less to read while the
        // other cluster suites run beside this one.
        try await withPipeline(environment: ["IAP_REDIS_URL": nodes.url, "IAP_PREFIX": "iap", "IAP_BUCKETS": "8"]) { pipeline in
            // Every ticket awaited by its event; the bound only ends a test that would hang.
            func terminal(_ ticket: String) async throws -> Ticket { try await pipeline.terminal(ticket, timeout: .seconds(90)) }
            let api = pipeline.simulator.serverAPI
            let user = Self.user
            var transaction = SignedFixture.sold("2000000000000501", currency: "USD")
            transaction.type = "Consumable"
            transaction.environment = "Sandbox"
            transaction.quantity = 2
            transaction.appAccountToken = "5b1c0a0e-3c11-4c77-9f0a-1d2e3f405162"
            transaction.appTransactionID = "704000000000077"
            let signed = try api.register(transaction)
            #expect(try await terminal(try await pipeline.submit(signed: signed, user: user)).status == .granted)
            // A purchase with no price (as a legacy receipt's), signed so that no call to Apple can be slow here.
            let plain = try api.register(SignedFixture.consumable("2000000000000502"))
            #expect(try await terminal(try await pipeline.submit(signed: plain, user: user)).status == .granted)
            let refund = try await pipeline.notify(try api.signedNotification(type: "REFUND", transactionID: "2000000000000501", revocationPercentage: 50_000))
            #expect(try await terminal(try #require(refund.json["ticket"] as? String)).result == "partially_revoked")
            try await ConsumptionRequestTests.consent(pipeline, user, true)
            #expect(try await ConsumptionRequestTests.record(pipeline, "2000000000000501", #"{"delivery_status": "DELIVERED"}"#, user: user).status == 200)
            #expect(try await pipeline.store.grantByOperator(id: "comp-9", user: user, product: "gold.100", quantity: 1, by: "ops", note: "") == nil)
            // A grant for a time: its record, its end on the schedule, its event.
            let timed = try TimedGrantOrder(grantID: "vip-7", entitlement: "premium", duration: .seconds(7 * 86_400), reason: "compensation")
                .grant(catalog: PipelineHarness.catalog, source: "api", by: "", now: currentTimeMs())
            #expect(try await pipeline.store.grantForATime(user: user, grant: timed) == .granted(timed))
            let ports = try await nodes.primaryPorts()
            #expect(!(try await Self.traces(of: user, ports: ports)).isEmpty)

            let erased = try await pipeline.post(raw: Data(), contentType: nil, path: "/v1/users/\(user)", method: .DELETE)
            #expect(erased.status == 200, "\(erased.json)")
            let pseudonym = try #require(erased.json["pseudonym"] as? String)
            #expect(pseudonym.hasPrefix("erased:") && !pseudonym.contains(user))
            #expect((erased.json["renamed"] as? Int ?? 0) >= 4 && (erased.json["entries_deleted"] as? Int ?? 0) >= 4)
            #expect(try await Self.traces(of: user, ports: ports) == [])
            // The ledger keeps each claim: under the pseudonym.
            let record = try await pipeline.redis.send(
                "HGETALL", pipeline.configuration.keys.grant(unit: "2000000000000501", originalTransactionID: "2000000000000501")).stringDictionary
            #expect(record["user_id"] == pseudonym && record["revoked_quantity"] == "1")
            // The record is gone; erasing again changes nothing more.
            let gone = try await pipeline.get("/v1/users/\(user)")
            #expect(gone.status == 410 && (gone.json["error"] as? [String: Any])?["code"] as? String == "user_erased")
            let again = try await pipeline.post(raw: Data(), contentType: nil, path: "/v1/users/\(user)", method: .DELETE)
            #expect(again.status == 200 && again.json["pseudonym"] as? String == pseudonym && again.json["renamed"] as? Int == 0)
            // The same purchases again, by the same id or another: never granted twice.
            // The same evidence again is a resubmission: its ticket, never a new grant.
            let replay = try await pipeline.post(["signed_transaction": signed, "user_id": user])
            #expect(replay.status == 200 && (replay.json["status"] as? String) == "granted", "\(replay.json)")
            // Another copy of the purchase (signed anew: other evidence, the same transaction) by someone else.
            let copy = try api.register(SignedFixture.consumable("2000000000000502"))
            #expect(copy != plain)
            let other = try await terminal(try await pipeline.submit(signed: copy, user: "someone-else"))
            #expect(other.transactions.map(\.outcome) == [.duplicate])
            #expect(try await pipeline.fulfilments().filter {
                $0["event"] == "granted" && ["2000000000000502", "2000000000000501"].contains($0["unit"] ?? "")
            }.isEmpty)
            #expect(try await Self.traces(of: user, ports: ports) == [])
        }
    }

    /// The bucket's step on its own, on a cluster node: records renamed only where they name the
    /// user, entries deleted, indexes gone, and a second run changes nothing.
    @Test func eraseUserInBucketRenamesOnlyWhatNamesTheUser() async throws {
        try await withClusterNode { redis, _ in
            let keys = RedisKeys(prefix: "{t}iap")
            let store = PipelineStore(redis: redis, keys: keys)
            try await redis.send("HSET", keys.grant(unit: "1"), "user_id", "u", "product_id", "p")
            try await redis.send("HSET", keys.grant(unit: "2"), "user_id", "other", "transferred_from", "u")
            try await redis.send("SET", keys.owner(originalTransactionID: "1"), "u")
            try await redis.send("SET", keys.owner(originalTransactionID: "2"), "other")
            try await redis.send("ZADD", keys.purchases(user: "u"), "1", "1")
            try await redis.send("SADD", keys.webhookBusy, "u", "other")
            let kept = try #require(try await redis.send("XADD", keys.fulfilment, "*", "user_id", "other").string)
            let named = try #require(try await redis.send("XADD", keys.fulfilment, "*", "user_id", "u").string)
            // The user's range of the events index goes; a user whose id begins alike keeps theirs.
            for member in ["001u\u{0}1-0\u{0}granted\u{0}1\u{0}1\u{0}p", "002uu\u{0}1-0\u{0}granted\u{0}2\u{0}2\u{0}p"] {
                try await redis.send("ZADD", keys.userEvents, "0", member)
            }
            let records = [keys.grant(unit: "1"), keys.grant(unit: "2"), keys.owner(originalTransactionID: "1"), keys.owner(originalTransactionID: "2")]
            let step = EraseUserInBucket(keys, user: "u", pseudonym: "erased:ab", records: records, entries: [named])
            let (renamed, deleted) = try await store.run(step)
            #expect(renamed == 3 && deleted == 1)
            #expect(try await redis.send("HGET", keys.grant(unit: "1"), "user_id").string == "erased:ab")
            #expect(try await redis.send("HGETALL", keys.grant(unit: "2")).stringDictionary == ["user_id": "other", "transferred_from": "erased:ab"])
            #expect(try await redis.send("GET", keys.owner(originalTransactionID: "2")).string == "other")
            #expect(try await redis.send("EXISTS", keys.purchases(user: "u")).int == 0)
            #expect(try await redis.send("ZRANGE", keys.userEvents, "0", "-1").array?.compactMap(\.string) == ["002uu\u{0}1-0\u{0}granted\u{0}2\u{0}2\u{0}p"])
            #expect(try await redis.send("SMEMBERS", keys.webhookBusy).array?.compactMap(\.string) == ["other"])
            #expect(try await redis.send("XRANGE", keys.fulfilment, "-", "+").array?.compactMap { $0.array?.first?.string } == [kept])
            #expect(try await store.run(EraseUserInBucket(keys, user: "u", pseudonym: "erased:ab", records: records, entries: [named])) == (0, 0))
            // Tickets: renamed while they live, a missing one left missing.
            try await redis.send("HSET", keys.ticket("T1"), "user_id", "u", "status", "granted")
            #expect(try await store.run(PseudonymiseTickets(tickets: [keys.ticket("T1"), keys.ticket("T2")], user: "u", pseudonym: "erased:ab")) == 1)
            #expect(try await redis.send("EXISTS", keys.ticket("T2")).int == 0)
        }
    }
}
