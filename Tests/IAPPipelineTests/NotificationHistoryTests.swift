import AppStoreServerAPI
import AppleJWS
import Foundation
@testable import PipelineCore
@testable import IAPStages
@testable import IAPOperations
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// Notification history: apple-sim keeps every notification it signs with its send attempts and
/// retries on Apple's (compressed) schedule; the backfill and the standing sweep read Get
/// Notification History and store what the intake never got, through the intake's own checks.
@Suite struct NotificationHistoryTests {
    static let compressed: [Duration] = Array(repeating: .milliseconds(20), count: 5)

    static func walk(_ pipeline: PipelineHarness) throws -> NotificationHistoryWalk {
        NotificationHistoryWalk(
            client: try #require(pipeline.lookupClient),
            admission: try #require(try NotificationAdmission.make(pipeline.configuration, store: pipeline.store)), logger: testLogger)
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// The intake is down for longer than Apple's five retries: the refund never arrives, the
    /// purchase stays granted. The notifier's sweep, with no operator, finds it in Apple's history
    /// (onlyFailures), stores it as the intake would, and the refund is applied once.
    @Test func aRefundLostToAnOutageLongerThanApplesRetriesIsRevokedByTheSweep() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let api = pipeline.simulator.serverAPI
            api.setRetryDelays(Self.compressed, timeout: .milliseconds(300))
            let id = "7300000000000001"
            let jws = try api.register(SignedFixture.consumable(id))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws)).status == .granted)
            // The outage: the intake is down for longer than Apple retries.
            api.setNotificationURL(pipeline.intake.baseURL + "/v1/notifications/apple", environment: "Sandbox")
            await pipeline.intake.stop()
            let uuid = UUID().uuidString.lowercased()
            _ = try api.signedNotification(type: "REFUND", transactionID: id, uuid: uuid)
            api.send(uuid: uuid)
            try await until("Apple gives up after its first attempt and five retries", within: .seconds(20)) {
                api.sentNotifications().first { $0.uuid == uuid }?.attempts == 6
            }
            #expect(api.sentNotifications().first { $0.uuid == uuid }?.delivered == false)
            #expect(try await pipeline.fulfilments().map { $0["event"] ?? "?" } == ["granted"])

            // The notifier's sweep, as iap-notifier runs it.
            let sweeper = NotificationSweeper(
                walk: try Self.walk(pipeline), store: pipeline.store, period: .milliseconds(500), logger: testLogger)
            let running = Task { try await sweeper.run() }
            defer { running.cancel() }
            let entries = try await pipeline.fulfilments(until: { $0.contains { $0["event"] == "revoked" } })
            #expect(entries.map { $0["event"] ?? "?" } == ["granted", "revoked"])
            let ticket = try #require(try await pipeline.store.notificationTicket(uuid: uuid, originalTransactionID: id))
            #expect(try await pipeline.terminal(ticket).result == "revoked")
            try await until("the sweep keeps its cursor and what it found", within: .seconds(10)) {
                let state = try await pipeline.store.notificationSweepState()
                return state["cursor:Sandbox"] != nil && state["cursor:Production"] != nil && state["owner"] == nil
            }
            // Later sweeps see it again (Apple still lists it as undelivered): seen before, nothing twice.
            try await until("a later sweep finds nothing new", within: .seconds(10)) {
                try await pipeline.store.notificationSweepState()["last_new"] == "0"
            }
            #expect(try await pipeline.fulfilments().map { $0["event"] ?? "?" } == ["granted", "revoked"])
        }
    }

    /// A backfill over three pages: what the intake got is `seen_before`, the rest is stored, a
    /// notification for another app is invalid (never stored); a rerun stores nothing.
    @Test func aBackfillStoresWhatIsMissingAndARerunFindsItAllStored() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let api = pipeline.simulator.serverAPI
            let start = Self.now() - 1000
            var ids: [String] = []
            for index in 0..<44 {
                let id = String(7_310_000_000_000_000 + index)
                ids.append(id)
                _ = try api.register(SignedFixture.consumable(id))
            }
            // Apple signed a REFUND for each; the intake got the first five.
            var delivered: [String] = []
            for id in ids {
                let signed = try api.signedNotification(type: "REFUND", transactionID: id)
                if delivered.count < 5 {
                    #expect(try await pipeline.notify(signed).status == 200)
                    delivered.append(id)
                }
            }
            var foreign = SignedFixture.consumable("7319999999999999")
            foreign.bundleID = "com.example.other"
            _ = try api.register(foreign)
            _ = try api.signedNotification(type: "REFUND", transactionID: "7319999999999999")

            let walk = try Self.walk(pipeline)
            let query = NotificationHistoryQuery(startDate: start, endDate: Self.now() + 1)
            let first = await walk.run(query, environment: .sandbox)
            #expect(first.complete && first.error == nil)
            #expect(first.pages == 3 && first.seen == 45)
            #expect(first.new == 39 && first.seenBefore == 5 && first.invalid == 1)
            #expect(first.refusals.map(\.code) == ["bundle_mismatch"])
            let again = await walk.run(query, environment: .sandbox)
            #expect(again.complete && again.new == 0 && again.seenBefore == 44 && again.invalid == 1)
            // Production has none of them.
            let production = await walk.run(query, environment: .production)
            #expect(production.complete && production.seen == 0 && production.pages == 1)
            // One customer's, by any of their transaction ids; one type.
            let one = await walk.run(
                NotificationHistoryQuery(startDate: start, endDate: Self.now() + 1, transactionId: ids[7]), environment: .sandbox)
            #expect(one.seen == 1 && one.seenBefore == 1)
            let renewals = await walk.run(
                NotificationHistoryQuery(startDate: start, endDate: Self.now() + 1, notificationType: "DID_RENEW"), environment: .sandbox)
            #expect(renewals.complete && renewals.seen == 0)
            // Every stored REFUND revokes its purchase's grant once (here: none was granted, so
            // each is remembered for a purchase that may come later).
            for id in ids {
                #expect(try await pipeline.redis.send("EXISTS", pipeline.configuration.keys.refunded(unit: id, originalTransactionID: id)).int == 1)
            }
        }
    }

    /// Only what Apple could not deliver, and Apple's own refusals of a bad request.
    @Test func onlyFailuresListsWhatNeverArrivedAndBadRequestsAreRefused() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let api = pipeline.simulator.serverAPI
            api.setRetryDelays([])
            api.setNotificationURL(pipeline.intake.baseURL + "/v1/notifications/apple", environment: "Sandbox")
            let start = Self.now() - 1000
            let arrived = UUID().uuidString.lowercased()
            _ = try api.register(SignedFixture.consumable("7320000000000001"))
            _ = try api.signedNotification(type: "REFUND", transactionID: "7320000000000001", uuid: arrived)
            api.send(uuid: arrived)
            try await until("Apple delivers it", within: .seconds(10)) { api.sentNotifications().first { $0.uuid == arrived }?.delivered == true }
            // A wrong route answers 404: a failure Apple would retry.
            api.setNotificationURL(pipeline.intake.baseURL + "/v1/notifications/wrong", environment: "Sandbox")
            let refused = UUID().uuidString.lowercased()
            _ = try api.register(SignedFixture.consumable("7320000000000002"))
            _ = try api.signedNotification(type: "REFUND", transactionID: "7320000000000002", uuid: refused)
            api.send(uuid: refused)
            try await until("both attempts are made", within: .seconds(10)) {
                api.sentNotifications().filter { [arrived, refused].contains($0.uuid) && $0.attempts == 1 }.count == 2
            }
            let walk = try Self.walk(pipeline)
            let failures = await walk.run(
                NotificationHistoryQuery(startDate: start, endDate: Self.now() + 1, onlyFailures: true), environment: .sandbox)
            #expect(failures.complete && failures.seen == 1 && failures.new == 1, "\(failures)")
            #expect(try await pipeline.store.notificationTicket(uuid: refused, originalTransactionID: "7320000000000002") != nil)

            let client = try #require(pipeline.lookupClient)
            for (query, code) in [
                (NotificationHistoryQuery(startDate: start, endDate: start), 4_000_013),
                (NotificationHistoryQuery(startDate: start - NotificationHistoryQuery.keptMs - 60_000, endDate: start), 4_000_012),
                (NotificationHistoryQuery(startDate: start, endDate: start + 1, notificationType: "REFUND", transactionId: "1"), 4_000_019),
            ] {
                guard case .refused(let errorCode, _) = await client.notificationHistory(query, paginationToken: nil, environment: .sandbox) else {
                    Issue.record("Apple took \(query)")
                    continue
                }
                #expect(errorCode == code)
                #expect(query.problem(now: Self.now()) != nil)
            }
            let badToken = await client.notificationHistory(
                NotificationHistoryQuery(startDate: start, endDate: start + 1), paginationToken: "nonsense", environment: .sandbox)
            #expect(badToken == .refused(errorCode: 4_000_014, detail: "HTTP 400 errorCode 4000014: Invalid request. The pagination token is invalid."))
        }
    }

    /// The lease: one process sweeps at a time; the next sweep is due a period after the last;
    /// a process whose lease expired cannot move the cursors. (On a cluster node with tagged keys,
    /// as `DeclaredKeysTests` asks: both scripts touch only the key they declare.)
    @Test func oneProcessSweepsAtATimeAndOnlyTheHolderMovesTheCursor() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: RedisKeys(prefix: "{t}iap"))
            guard case .claimed(let now, let cursors) = try await store.claimNotificationSweep(owner: "a", lease: .seconds(30)) else {
                Issue.record("a first sweep is due at once")
                return
            }
            #expect(cursors.isEmpty)
            guard case .held = try await store.claimNotificationSweep(owner: "b", lease: .seconds(30)) else {
                Issue.record("b took a held sweep")
                return
            }
            #expect(try await store.claimNotificationSweep(owner: "b", lease: .seconds(30), renew: true) == .lost)
            guard case .claimed = try await store.claimNotificationSweep(owner: "a", lease: .seconds(30), renew: true) else {
                Issue.record("the holder could not renew")
                return
            }
            #expect(try await store.finishNotificationSweep(
                owner: "b", nextIn: .seconds(60), cursors: ["Production": now], seen: 0, new: 0, invalid: 0, error: nil) == false)
            #expect(try await store.notificationSweepState()["cursor:Production"] == nil)
            #expect(try await store.finishNotificationSweep(
                owner: "a", nextIn: .seconds(60), cursors: ["Production": now], seen: 3, new: 1, invalid: 0, error: nil))
            let state = try await store.notificationSweepState()
            #expect(state["cursor:Production"] == String(now) && state["cursor:Sandbox"] == nil && state["owner"] == nil)
            #expect(state["last_seen"] == "3" && state["last_new"] == "1" && state["last_error"] == "")
            guard case .notDue(let until) = try await store.claimNotificationSweep(owner: "b", lease: .seconds(30)) else {
                Issue.record("a sweep ran again before it was due")
                return
            }
            #expect(until >= now + 60_000)
            // A holder that dies: its lease expires and another takes over, the cursor as it was.
            try await redis.send("HSET", store.keys.notificationSweep, "next_at", "0", "owner", "dead", "lease_until", "1")
            guard case .claimed(_, let kept) = try await store.claimNotificationSweep(owner: "b", lease: .seconds(30)) else {
                Issue.record("an expired lease was not taken over")
                return
            }
            #expect(kept == ["Production": now])
        }
    }

    @Test func backfillTimesAreDatesOrDurationsBackFromNow() throws {
        let now: Int64 = 1_790_000_000_000
        #expect(HistoryTime.parse("72h", now: now) == now - 72 * 3_600_000)
        #expect(HistoryTime.parse("30m", now: now) == now - 1_800_000)
        #expect(HistoryTime.parse("7d", now: now) == now - 7 * 86_400_000)
        #expect(HistoryTime.parse("2026-11-01T00:00:00Z", now: now) == 1_793_491_200_000)
        let fraction = try #require(HistoryTime.parse("2026-11-01T00:00:00.250+01:00", now: now))
        #expect(fraction == Int64(1_793_487_600_250), "\(fraction)")
        #expect(HistoryTime.parse("2026-11-01", now: now) == 1_793_491_200_000)
        for bad in ["", "h", "-5h", "72x", "yesterday", "2026-13-01"] { #expect(HistoryTime.parse(bad, now: now) == nil, "\(bad)") }
    }
}
