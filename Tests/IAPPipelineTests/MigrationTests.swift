import Foundation
import PipelineCore
import IAPStages
import IAPConsole
import IAPOperations
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// `iapctl migrate`'s engine: a ledger written by the pipeline on one server, with jobs left in
/// its queues, moved into 16 buckets on a real Redis Cluster of three primaries, verified, then
/// run on by a fleet there: old tickets resolve, a resubmission finds its ticket, the jobs left
/// finish, nothing is granted twice.
@Suite struct MigrationTests {
    static let buckets = 16

    @Test func aSingleServerLedgerMovesIntoBucketsOnAClusterAndTheFleetGoesOn() async throws {
        let nodes = try await RedisClusterNodes.start()
        defer { nodes.stop() }
        let cluster = try RedisConfiguration(url: nodes.url)
        let keys = RedisKeys(prefix: "iap", layout: BucketLayout(count: Self.buckets))
        var granted: String = ""
        var waiting: String = ""
        var claimed: String = ""
        var sourceEntries = 0
        try await withPipeline(serverAPI: true) { source in
            // Grants, a refund (a revoked grant, the user's refund count, the notification's UUID).
            granted = try await source.submit(receipt([gold("m-1"), gold("m-2"), gold("m-3")]), user: "alice")
            #expect(try await source.terminal(granted).status == .granted)
            let api = source.simulator.serverAPI
            let refunded = "4200000000000001"
            #expect(try await source.terminal(try await source.submit(signed: try api.register(SignedFixture.consumable(refunded)), user: "bob")).status == .granted)
            let reply = try await source.notify(try api.signedNotification(type: "REFUND", transactionID: refunded))
            #expect(try await source.terminal(try #require(reply.json["ticket"] as? String)).result == "revoked")
            // A backend's consumer group that has read everything and acknowledged all but the last entry.
            let stream = source.configuration.keys.fulfilment
            try await source.redis.send("XGROUP", "CREATE", stream, "backend", "0")
            let read = try await source.redis.send("XREADGROUP", "GROUP", "backend", "b-1", "STREAMS", stream, ">")
            let ids = (read.array?.first?.array?.last?.array ?? []).compactMap { $0.array?.first?.string }
            sourceEntries = ids.count
            #expect(ids.count == 6)  // 3 grants, 1 grant, the refund's notification, 1 revocation
            for id in ids.dropLast() { try await source.redis.send("XACK", stream, "backend", id) }
            // A receipt claimed and waiting for the grant stage, and one waiting for the verifier.
            await source.stop(.grant)
            claimed = try await source.submit(receipt([gold("m-4"), gold("m-5"), gold("m-6"), gold("m-7")]), user: "carol")
            try await until("claimed and queued for grant") { try await source.length(source.configuration.keys.queue(.grant)) == 1 }
            await source.stop(.verify)
            waiting = try await source.submit(receipt([gold("m-8"), gold("m-9")]), user: "dave")

            // An Apple Account's users (IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT) keep their places.
            #expect(try await source.store.seatAppleAccount("7001", user: "alice", limit: nil))
            // Every other family of the key map, written as the pipeline writes it: an Apple
            // outage the fleet's breaker saw and opened on, an offer signature issued, a console
            // sign-in and its audit.
            let outage = AppleBreakerSettings(minFailures: 3, quiet: .seconds(2), probe: .seconds(1))
            for at: Int64 in [10_000, 11_000, 12_000, 13_000] {
                _ = try await source.store.recordAppleFailure(.verifyReceipt, reason: "apple_http_503", failedBefore: nil, settings: outage, now: at)
            }
            let breaker = try await source.store.appleBreakerState(.verifyReceipt)
            #expect(breaker["openings"] == "1")
            try await source.store.recordOfferSignature(user: "alice", fields: [("kind", "promotional"), ("offer_id", "o-1")])
            let sessions = ConsoleSessions(redis: source.redis, keys: source.configuration.keys, lifetime: .seconds(3600))
            let signedIn = try await sessions.open(for: ConsoleUser(name: "ops", role: .operator))
            try await source.redis.send("XADD", source.configuration.keys.consoleAudit, "*", "user", "ops", "action", "sign-in").checked()

            let destination = RedisClient(configuration: cluster, poolSize: 4)
            defer { Task { await destination.close() } }
            let migration = LedgerMigration(
                source: source.redis, sourcePrefix: "iap", destination: destination, keys: keys, lease: .seconds(30))
            // Refused while the intake and workers run, before anything is written.
            await #expect(throws: LedgerMigration.Failure.self) { try await migration.run() }
            #expect(try await destination.send("EXISTS", keys.grant(unit: "m-1", originalTransactionID: "m-1")).int == 0)
            for stage in Stage.allCases { await source.stop(stage) }
            await source.intake.stop()

            let report = try await migration.run()
            #expect(report.verified, "\(report)")
            let family = Dictionary(uniqueKeysWithValues: report.families.map { ($0.name, $0) })
            // Grant records: alice's 3 and bob's; claims: those and carol's 4, claimed and not yet granted.
            #expect(family["grant"]?.source == 4 && family["grant"]?.found == 4 && family["grant"]?.different == 0)
            #expect(family["txn"]?.source == 8 && family["txn"]?.found == 8 && family["txn"]?.different == 0)
            #expect(family["jobs"]?.moved == 2 && family["fulfilment"]?.found == 6 && family["refunds"]?.found == 1)
            #expect(try await destination.send("HGET", keys.appleAccount("7001"), "u:alice").string == "1")
            #expect(try await destination.send("SMEMBERS", keys.userAppleAccounts(user: "alice")).array?.compactMap(\.string) == ["7001"])
            #expect(try await PipelineStore(redis: destination, keys: keys).appleBreakerState(.verifyReceipt) == breaker)
            #expect(try await destination.send("XLEN", keys.offerSignatures(user: "alice")).int == 1)
            #expect(try await destination.send("XLEN", keys.consoleAudit).int == 1)
            let moved = ConsoleSessions(redis: destination, keys: keys, lifetime: .seconds(3600))
            #expect(try await moved.user(for: signedIn) == ConsoleUser(name: "ops", role: .operator))
            #expect(report.unknownKeys == 0)
            // Each user's events: the six entries' members, each to its purchase's bucket.
            #expect(family["user-events"]?.source == 6 && family["user-events"]?.found == 6, "\(report)")
            // Run again: the same keys with the same values.
            let again = try await migration.run()
            #expect(again.verified && again.families.map(\.found) == report.families.map(\.found))
            // The source is untouched: its queues still hold the two jobs.
            #expect(try await source.length(source.configuration.keys.queue(.grant)) == 1)
            #expect(try await source.length(source.configuration.keys.queue(.verify)) == 1)
        }

        try await withPipeline(environment: ["IAP_REDIS_URL": nodes.url, "IAP_PREFIX": "iap", "IAP_BUCKETS": "\(Self.buckets)"]) { fleet in
            #expect(fleet.configuration.redis.layout.count == Self.buckets)
            // The jobs left in the source's queues finish here: the grant job through parts.
            let carol = try await fleet.terminal(claimed)
            #expect(carol.status == .granted && carol.transactions.map(\.outcome) == [.granted, .granted, .granted, .granted])
            let dave = try await fleet.terminal(waiting)
            #expect(dave.status == .granted && dave.transactions.count == 2)
            // A ticket from before buckets resolves, and a resubmission finds it.
            #expect(try await fleet.readTicket(granted)?.status == .granted)
            let resubmitted = try await fleet.postUntilAccepted(["receipt_data": receipt([gold("m-1"), gold("m-2"), gold("m-3")]).receiptData(), "user_id": "alice"])
            #expect(resubmitted.json["ticket"] as? String == granted)
            // Purchases granted before the move are duplicates for anyone else, and for the same user again.
            let thief = try await fleet.terminal(try await fleet.submit(receipt([gold("m-2"), gold("m-5")]), user: "eve"))
            #expect(thief.transactions.map(\.outcome) == [.duplicate, .duplicate])
            // Every purchase granted once: 4 before, 6 here, one revocation.
            let entries = try await fleet.fulfilments()
            #expect(entries.filter { $0["event"] == "granted" }.count == 10)
            #expect(Set(entries.filter { $0["event"] == "granted" }.compactMap { $0["unit"] }).count == 10)
            #expect(try await fleet.store.refundCount(of: "bob") == 1)
            // The users' events, moved and written since, newest first, each naming its entry.
            #expect(try await fleet.store.userEvents(of: "bob").events.map(\.event) == ["revoked", "notification", "granted"])
            #expect(try await fleet.store.userEvents(of: "carol").events.map(\.event) == ["granted", "granted", "granted", "granted"])
            // The backend's group goes on where it was: the one entry it had not acknowledged comes
            // again, with what was written since; nothing it had acknowledged does.
            var redelivered: [[String: String]] = []
            for bucket in keys.everyBucket {
                var command = RedisCommand("XREADGROUP", "GROUP", "backend", "b-1", "STREAMS", bucket.fulfilment, ">")
                command.routingKey = Array(bucket.fulfilment.utf8)
                let reply = try await fleet.redis.send(command)
                redelivered += (reply.array?.first?.array?.last?.array ?? []).compactMap { $0.array?.last?.stringDictionary }
            }
            #expect(redelivered.filter { $0["event"] == "revoked" }.count == 1)
            #expect(redelivered.count == (try await fleet.fulfilments(notifications: true)).count - sourceEntries + 1)
        }
    }
}
