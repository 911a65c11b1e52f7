import Foundation
import RedisClient
import Testing
import TestSupport

@testable import PipelineCore
@testable import IAPStages

/// Steps on a Redis Cluster slot being migrated. Redis runs a script on the slot's source while
/// every key it declares is still there, and then refuses, half-way through, a command on a key
/// the script itself emptied, the commands before it done: a step cut in two. (In the cluster
/// drill, a delivery's end popped a user's last event, then counted the list: the user stayed
/// marked busy with no job, and every later event of theirs waited for ever.) So every call also
/// declares its slot's migration guard, a key that never exists: no step runs while its slot
/// moves; each waits (`ASK`, then `TRYAGAIN`) and runs whole once the move ends.
@Suite struct SlotMigrationTests {
    static let keys = DeclaredKeysTests.keys

    @Test func aStepWaitsWhileItsSlotMovesAndThenRunsWhole() async throws {
        try await withRedisCluster(primaries: 3, replicasEach: 0) { redis, nodes in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            try await redis.send("XADD", Self.keys.fulfilment, "*", "event", "granted", "user_id", "alice", "unit", "u1")
            #expect(try await store.routeFulfilmentEvents(consumer: "webhook:w1", count: 10, now: 1000) == 1)
            let payload = try #require(
                try await redis.send("RPOPLPUSH", Self.keys.queue(.webhook), Self.keys.inflight(member: "webhook:w1")).string)
            let job = try Job.decode(payload)
            let head = try #require(try await store.nextWebhookEvent(user: "alice"))
            let eventID = try #require(WebhookEvent(listEntry: head)?.id)
            // Every key the step names is there (another user's job is queued, a dead letter
            // exists): without the guard, the source would run it and cut it after the pop.
            try await redis.send("LPUSH", Self.keys.queue(.webhook), "another job")
            try await redis.send("LPUSH", Self.keys.dead, "a dead letter")

            let slot = RedisClusterSlot.of(Self.keys.webhookBusy)
            #expect(RedisClusterSlot.of(Self.keys.migrationGuard(forKey: Self.keys.webhookBusy)) == slot)
            let source = try await nodes.primaryPort(ofSlot: slot)
            let target = try #require(try await nodes.primaryPorts().first { $0 != source })
            try await nodes.beginMove(slot, from: source, to: target)

            // While the slot moves, the step is refused whole (after the client's own retries).
            await #expect {
                try await store.finishWebhookEvent(payload, member: "webhook:w1", job: job, eventID: eventID, now: 2000)
            } throws: { ($0 as? RedisError)?.isTransient == true && "\($0)".contains("TRYAGAIN") }
            #expect(try await directReply(port: source, "LLEN", Self.keys.webhookEvents(user: "alice")) == "1")
            #expect(try await directReply(port: source, "SISMEMBER", Self.keys.webhookBusy, "alice") == "1")
            #expect(try await directReply(port: source, "LLEN", Self.keys.inflight(member: "webhook:w1")) == "1")

            // Once the keys are over and the move ends, it runs whole there.
            let moving = try await directReply(port: source, "CLUSTER", "GETKEYSINSLOT", String(slot), "1000")
            try await nodes.migrate(moving.split(separator: "\n").map(String.init), from: source, to: target)
            try await nodes.endMove(slot, to: target)
            #expect(try await store.finishWebhookEvent(payload, member: "webhook:w1", job: job, eventID: eventID, now: 2000) == .moved)
            #expect(try await directReply(port: target, "EXISTS", Self.keys.webhookEvents(user: "alice")) == "0")
            #expect(try await directReply(port: target, "SISMEMBER", Self.keys.webhookBusy, "alice") == "0", "alice is let go")
            #expect(try await directReply(port: target, "EXISTS", Self.keys.ticket(job.ticket)) == "0")
            #expect(try await directReply(port: target, "LLEN", Self.keys.inflight(member: "webhook:w1")) == "0")
        }
    }

    /// Whatever a key's name (a bucket's tag, a user's, none at all), its guard lies in its slot.
    @Test func theGuardLiesInTheSlotOfTheKeysItGuards() {
        for keys in [RedisKeys(prefix: "iap"), RedisKeys(prefix: "{iap}"), RedisKeys(prefix: "iap", layout: BucketLayout(count: 16))] {
            for bucket in keys.everyBucket {
                let all = [
                    bucket.queue(.grant), bucket.dailyWindow(user: "alice", product: "gems"), bucket.notificationSweep,
                    bucket.apiPermits(environment: "production", endpoint: "transaction_info"), bucket.appleAccount("7001"),
                    bucket.rateWindow(clientKey: "backend-1", second: 1_795_000_000), bucket.accountToken("a-token"),
                    bucket.ticket("some-ticket"), bucket.rateWindow(user: "u{1", second: 1),
                ]
                for key in all {
                    let guardKey = bucket.migrationGuard(forKey: key)
                    #expect(RedisClusterSlot.of(guardKey) == RedisClusterSlot.of(key), "\(key) → \(guardKey)")
                    #expect(guardKey.hasPrefix(keys.prefix + ":{") && guardKey.hasSuffix("}:migration-guard"))
                }
            }
        }
        #expect((0..<RedisClusterSlot.count).allSatisfy { RedisClusterSlot.of("{\(RedisClusterSlot.tag(ofSlot: $0))}") == $0 })
    }
}
