import AppleJWS
import AppleReceipt
import AppleSimulator
import AppStoreServerAPI
import Foundation
import PipelineCore
import IAPStages
import RedisClient
import TestSupport
import PipelineTestSupport
import Testing

/// Re-checks (the seeds' task engine): the schedule and its promotion as atomic steps, and
/// subscriptions that renew and end with no client, through the whole pipeline and apple-sim.
@Suite(.serialized) struct RecheckTests {
    static let schedule = RecheckSchedule(before: .seconds(60), after: .seconds(30), maxTries: 2)

    /// A subscription record as the grant stage leaves it, without going through it.
    static func record(
        _ store: PipelineStore, _ otx: String, user: String = "player-1", status: String = "active", expiresAt: Int64,
        tries: Int? = nil
    ) async throws {
        var fields = [
            "HSET", store.keys.subscription(originalTransactionID: otx), "user_id", user, "product_id", "vip.monthly",
            "status", status, "expires_at", String(expiresAt), "event_at", "1", "environment", "Sandbox",
        ]
        if let tries { fields += ["recheck_tries", String(tries)] }
        _ = try await store.redis.send(RedisCommand(fields))
    }

    @Test func promotionQueuesOnlyTheDueOnesABatchAtATimeAndCountsTheirTries() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let store = pipeline.store
            let keys = store.keys
            let now: Int64 = 1_800_000_000_000
            for id in ["s1", "s2", "s3"] { try await Self.record(store, id, expiresAt: now + 10_000) }
            try await Self.record(store, "gone", status: "revoked", expiresAt: now - 10_000)
            try await Self.record(store, "tired", status: "billing_retry", expiresAt: now - 10_000, tries: 4)
            for (id, due) in [("s1", now - 3), ("s2", now - 2), ("s3", now - 1), ("later", now + 1), ("gone", now - 9), ("tired", now - 8)] {
                _ = try await store.redis.send("ZADD", keys.rechecks, String(due), id)
            }
            _ = try await store.redis.send("ZADD", keys.rechecks, String(now - 10), "unknown")
            // One batch of 4 reads the 4 lowest scores only: unknown, gone, tired leave the schedule, s1 is queued.
            let first = try await store.promoteDueRechecks(schedule: Self.schedule, ticketTTL: .seconds(60), limit: 4, now: now)
            #expect(first == 1)
            let second = try await store.promoteDueRechecks(schedule: Self.schedule, ticketTTL: .seconds(60), limit: 4, now: now)
            #expect(second == 2)
            #expect(try await store.promoteDueRechecks(schedule: Self.schedule, ticketTTL: .seconds(60), limit: 4, now: now) == 0)
            let jobs = try await store.redis.send("LRANGE", keys.queue(.verify), "0", "-1").array?.compactMap(\.string) ?? []
            let decoded = try jobs.map { try Job.decode($0) }
            let requests = decoded.compactMap { job -> RecheckRequest? in
                if case .recheck(let request)? = job.toVerify?.evidence { return request }
                return nil
            }
            #expect(requests.count == decoded.count)
            #expect(Set(requests.map(\.originalTransactionID)) == ["s1", "s2", "s3"])
            #expect(decoded.allSatisfy { $0.source == "recheck" && $0.userID == "player-1" } && requests.allSatisfy { $0.environment == "Sandbox" })
            let ticket = try #require(try await store.ticket(decoded[0].ticket))
            #expect(ticket.status == .queued)
            // Each try is counted and the next one waits `after`; the ones that left are gone for good.
            #expect(try await store.redis.send("HGET", keys.subscription(originalTransactionID: "s1"), "recheck_tries").string == "1")
            #expect(try await store.recheckDue(originalTransactionID: "s1") == now + 30_000)
            for id in ["unknown", "gone", "tired"] {
                #expect(try await store.recheckDue(originalTransactionID: id) == nil)
            }
            #expect(try await store.recheckDue(originalTransactionID: "later") == now + 1)
            #expect(try await store.rechecksDue(within: .seconds(3600), now: now) == 4)

            // iapctl recheck: due now, tries from zero; an unknown subscription is said to be unknown.
            try await Self.record(store, "tired", status: "billing_retry", expiresAt: now - 10_000, tries: 4)
            #expect(try await store.forceRecheck(originalTransactionID: "tired", now: now))
            #expect(try await store.forceRecheck(originalTransactionID: "nobody", now: now) == false)
            #expect(try await store.promoteDueRechecks(schedule: Self.schedule, ticketTTL: .seconds(60), now: now) == 1)
        }
    }

    @Test func aGrantSchedulesBeforeTheEndAndAnExpiryUnschedules() async throws {
        try await withPipeline(environment: ["IAP_RECHECK_BEFORE_S": "600", "IAP_RECHECK_AFTER_S": "120"]) { pipeline in
            let store = pipeline.store
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let expires = now + 3_600_000
            let jws = try pipeline.simulator.serverAPI.register(JWSTransaction(
                transactionID: "8100", webOrderLineItemID: "w8100", bundleID: PipelineHarness.bundleID, productID: "vip.monthly",
                purchaseDate: now, expiresDate: expires, type: "Auto-Renewable Subscription", signedDate: now))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws)).status == .granted)
            #expect(try await store.recheckDue(originalTransactionID: "8100") == expires - 600_000)
            // Within `before` of its end: the next look is `after` past it.
            let late = try pipeline.simulator.serverAPI.register(JWSTransaction(
                transactionID: "8200", webOrderLineItemID: "w8200", bundleID: PipelineHarness.bundleID, productID: "vip.monthly",
                purchaseDate: now, expiresDate: now + 60_000, type: "Auto-Renewable Subscription", signedDate: now))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: late)).status == .granted)
            #expect(try await store.recheckDue(originalTransactionID: "8200") == now + 60_000 + 120_000)
            // Apple's notice that it expired: one closing re-check, `after` from now (a period a lost
            // notice skipped is found then); its answer that it expired ends the schedule.
            let expired = try pipeline.simulator.serverAPI.signedNotification(type: "EXPIRED", subtype: "VOLUNTARY", transactionID: "8100")
            let reply = try await pipeline.notify(expired)
            #expect(reply.status == 200)
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            _ = try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
            let closing = try #require(try await store.recheckDue(originalTransactionID: "8100"))
            #expect(closing >= before + 120_000 - 5000 && closing <= Int64(Date().timeIntervalSince1970 * 1000) + 120_000)
        }
    }

    static let fast = ["IAP_RECHECK_BEFORE_S": "0", "IAP_RECHECK_AFTER_S": "0.3", "IAP_RECHECK_MAX": "3"]

    static func play(
        _ pipeline: PipelineHarness, _ otx: String, renewals: Int, ending: SimulatedSubscription.Ending = .expire,
        notify: SimulatedSubscription.Notify? = nil, introOffer: String? = nil, winBackOffers: [String]? = nil
    ) throws -> String {
        var plan = SimulatedSubscription(
            originalTransactionID: otx, productID: "vip.monthly", bundleID: PipelineHarness.bundleID, environment: "Sandbox",
            periodMs: 1500, renewals: renewals, ending: ending, notify: notify)
        plan.introOffer = introOffer
        plan.winBackOffers = winBackOffers
        return try pipeline.simulator.serverAPI.startSubscription(plan)
    }

    /// Whether the stream has all `count` periods of subscription `otx`. Whether it also says
    /// `expired` depends on the machine's speed: the entry comes when the record turns expired, and
    /// a slow machine may grant a 1.5 s period (even the first) only after its end, when the record
    /// is born expired and nothing turns. So the record's end is read from the record
    /// (`untilExpired`), never from the order of the stream.
    static func ended(_ otx: String, periods count: Int) -> ([[String: String]]) -> Bool {
        { entries in periods(entries, otx).count == count }
    }

    /// Waits until subscription `otx`'s record is expired on its last period, `last`.
    static func untilExpired(_ pipeline: PipelineHarness, _ otx: String, last: String) async throws {
        try await until("the record of \(otx) ends expired on \(last)", within: .seconds(15)) {
            let record = try await pipeline.redis.send("HGETALL", pipeline.store.keys.subscription(originalTransactionID: otx)).stringDictionary
            return record["status"] == "expired" && record["latest_transaction_id"] == last
        }
    }

    /// Every period's grant on the stream, by transaction id.
    static func periods(_ entries: [[String: String]], _ otx: String) -> [String: [[String: String]]] {
        Dictionary(grouping: entries.filter {
            ($0["event"] == "granted" || $0["event"] == "renewed") && $0["original_transaction_id"] == otx
        }) { $0["transaction_id"] ?? "" }
    }

    @Test func aSubscriptionRenewedOnlyByRecheckIsGrantedOncePerPeriodToItsOwnerThenExpires() async throws {
        try await withPipeline(serverAPI: true, environment: Self.fast) { pipeline in
            let jws = try Self.play(pipeline, "9100", renewals: 2, introOffer: "trial-7", winBackOffers: ["wb-9"])
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "owner")).status == .granted)
            // No client, no notification: only re-checks tell the pipeline about periods 1 and 2 and the end.
            let entries = try await pipeline.fulfilments(until: { Self.periods($0, "9100").count == 3 })
            let periods = Self.periods(entries, "9100")
            #expect(periods.keys.sorted() == ["9100", "9100-r1", "9100-r2"])
            #expect(periods.values.allSatisfy { $0.count == 1 && $0[0]["user_id"] == "owner" })
            #expect(periods["9100-r1"]?.first?["event"] == "renewed" && periods["9100-r1"]?.first?["source"] == "recheck")
            // What each period cost, and the free trial the first was: as apple-sim signed them.
            #expect(periods["9100"]?.first?["offer_type"] == "1" && periods["9100"]?.first?["offer_identifier"] == "trial-7")
            #expect(periods["9100"]?.first?["price"] == "0" && periods["9100-r1"]?.first?["price"] == "4990")
            #expect(periods["9100-r1"]?.first?["storefront"] == "USA" && periods["9100-r1"]?.first?["offer_type"] == nil)
            // Apple's word that it expired ends the schedule (a late grant of the last period alone would not).
            try await until("Apple's expiry is applied", within: .seconds(15)) {
                try await pipeline.store.recheckDue(originalTransactionID: "9100") == nil
            }
            let record = try await pipeline.redis.send("HGETALL", pipeline.store.keys.subscription(originalTransactionID: "9100")).stringDictionary
            #expect(record["status"] == "expired" && record["latest_transaction_id"] == "9100-r2" && record["cause"] == "recheck")
            #expect(record["eligible_win_back_offer_ids"] == "wb-9")
            // Each re-check keeps where it read Apple's history to; the next reads only what changed.
            let kept = try #require(record["history_revision"], "\(record)")
            #expect(kept.hasPrefix("hr:") && pipeline.simulator.serverAPI.historyRevisionsAsked().first == "")
            // A re-check handed that revision (promote_due_rechecks hands it on: DeclaredKeysTests) reads from it.
            let check = ServerAPISubscriptionCheck(
                client: try #require(pipeline.lookupClient),
                signedData: SignedDataVerifier(rootCertificates: try pipeline.configuration.rootCertificates()))
            let reads = pipeline.simulator.serverAPI.historyRevisionsAsked().count
            let answer = await check.check(
                originalTransactionID: "9100", environment: record["environment"] ?? "Production", knownLatest: "9100-r2",
                knownExpiresAt: nil, knownRevision: kept, attempt: 1)
            guard case .valid(let receipt) = answer else {
                Issue.record("the re-check did not answer: \(answer)")
                return
            }
            // (A re-check of the pipeline's own may read meanwhile: the asks since are searched, not indexed.)
            #expect(pipeline.simulator.serverAPI.historyRevisionsAsked().dropFirst(reads).contains(kept))
            #expect(receipt.renewal?.historyRevision == kept, "nothing changed since: the revision stays")
            let entitlements = try await pipeline.store.entitlements(user: "owner", catalog: PipelineHarness.catalog)
            #expect(entitlements.entitlements.isEmpty)
            // Its end is announced to the owner, from the re-check, when it was on in our books: a
            // slow machine may grant each 1.5 s period only after it ended, and a subscription
            // that was never active has nothing to end.
            let all = try await pipeline.fulfilments(until: { _ in true })
            if all.contains(where: { $0["event"] == "entitlement_changed" && $0["status"] == "active" }) {
                let expired = try #require(all.first { $0["event"] == "expired" })
                #expect(expired["user_id"] == "owner" && expired["source"] == "recheck")
                // Which step turned it expired (a late period's grant, or Apple's answer with its
                // reason) depends on the machine's speed: the reason is pinned where a notification
                // says it (EntitlementEndToEndTests), the offers by the record above.
            }
        }
    }

    /// Apple's statuses may lag its history by a renewal: a period the history already shows
    /// after the latest the statuses name is not granted by that answer, so the revision kept
    /// must not pass it; the next re-check, later than that period's end, still grants it.
    @Test func aPeriodBeyondALaggingLatestIsReadAgainByTheNextRecheck() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let api = pipeline.simulator.serverAPI
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            // Periods of an hour, begun three and a half hours ago: periods 0 to 3 exist.
            let plan = SimulatedSubscription(
                originalTransactionID: "9600", productID: "vip.monthly", bundleID: PipelineHarness.bundleID, environment: "Sandbox",
                periodMs: 3_600_000, renewals: 5, start: now - 12_600_000)
            _ = try api.startSubscription(plan)
            let check = ServerAPISubscriptionCheck(
                client: try #require(pipeline.lookupClient),
                signedData: SignedDataVerifier(rootCertificates: try pipeline.configuration.rootCertificates()))
            func periods(_ outcome: VerificationOutcome) -> [String] {
                guard case .valid(let receipt) = outcome else { return ["not valid: \(outcome)"] }
                return receipt.transactions.map(\.transactionID)
            }
            let p0 = plan.transactionID(period: 0)
            api.setFaults(SimulatedAPIFaults(laggingStatuses: 2))  // the next answer: two renewals behind
            let lagging = await check.check(
                originalTransactionID: "9600", environment: "Sandbox", knownLatest: p0, knownExpiresAt: now - 9_000_000, attempt: 1)
            // The statuses say period 1 is the latest; the history already shows 2 and 3.
            #expect(periods(lagging) == [p0, plan.transactionID(period: 1)], "\(periods(lagging))")
            guard case .valid(let first) = lagging else { return }
            // Periods 2 and 3 were seen beyond the latest and not granted: the revision stays where the read began.
            #expect(first.renewal?.historyRevision == nil)
            // The next re-check comes when 3 is the latest: 2 is read again, and granted with it.
            let next = await check.check(
                originalTransactionID: "9600", environment: "Sandbox", knownLatest: plan.transactionID(period: 1),
                knownExpiresAt: now - 5_400_000, knownRevision: first.renewal?.historyRevision, attempt: 1)
            #expect(Array(periods(next).suffix(2)) == [plan.transactionID(period: 2), plan.transactionID(period: 3)], "\(periods(next))")
            guard case .valid(let second) = next else { return }
            #expect(second.renewal?.historyRevision?.hasPrefix("hr:") == true, "nothing beyond the latest now: the revision moves on")
        }
    }

    @Test func aRenewalSeenByNotificationRecheckAndClientIsGrantedOnce() async throws {
        try await withPipeline(serverAPI: true, environment: Self.fast) { pipeline in
            // Apple's notices arrive twice each and late, some overtaking others.
            let notify = SimulatedSubscription.Notify(
                url: pipeline.intake.baseURL + "/v1/notifications/apple", duplicateRate: 1, maxDelayMs: 400)
            let jws = try Self.play(pipeline, "9200", renewals: 2, notify: notify)
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "owner")).status == .granted)
            // The client sends period 1 too, as soon as it exists.
            var renewal: String?
            try await until("period 1 begins", within: .seconds(10)) {
                renewal = try pipeline.simulator.serverAPI.signedTransaction("9200-r1")
                return renewal != nil
            }
            let ticket = try await pipeline.submit(signed: try #require(renewal), user: "owner")
            #expect([.granted, .duplicate].contains(try await pipeline.terminal(ticket).status))
            let entries = try await pipeline.fulfilments(until: Self.ended("9200", periods: 3))
            let periods = Self.periods(entries, "9200")
            #expect(periods.keys.sorted() == ["9200", "9200-r1", "9200-r2"])
            #expect(periods.values.allSatisfy { $0.count == 1 && $0[0]["user_id"] == "owner" })
            try await Self.untilExpired(pipeline, "9200", last: "9200-r2")
        }
    }

    @Test func aRecheckLateByMoreThanAPeriodGrantsEveryPeriodItMissed() async throws {
        try await withPipeline(serverAPI: true, environment: Self.fast) { pipeline in
            let jws = try Self.play(pipeline, "9500", renewals: 2)
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "owner")).status == .granted)
            // No verify worker while period 1 comes and goes: the re-check that comes then sees period 2 as the latest.
            await pipeline.stop(.verify)
            try await until("period 2 begins", within: .seconds(10)) {
                try pipeline.simulator.serverAPI.signedTransaction("9500-r2") != nil
            }
            pipeline.start(.verify)
            let entries = try await pipeline.fulfilments(until: Self.ended("9500", periods: 3))
            let periods = Self.periods(entries, "9500")
            #expect(periods.keys.sorted() == ["9500", "9500-r1", "9500-r2"])
            #expect(periods.values.allSatisfy { $0.count == 1 && $0[0]["user_id"] == "owner" })
            #expect(periods["9500-r1"]?.first?["source"] == "recheck" && periods["9500-r2"]?.first?["source"] == "recheck")
            try await Self.untilExpired(pipeline, "9500", last: "9500-r2")
        }
    }

    @Test func aRenewalAnotherAccountSendsIsGrantedToTheOwner() async throws {
        // Slow re-checks: only the client brings the renewal here.
        try await withPipeline(serverAPI: true, environment: ["IAP_RECHECK_BEFORE_S": "0", "IAP_RECHECK_AFTER_S": "60"]) { pipeline in
            let jws = try pipeline.simulator.serverAPI.startSubscription(SimulatedSubscription(
                originalTransactionID: "9700", productID: "vip.monthly", bundleID: PipelineHarness.bundleID, environment: "Sandbox",
                periodMs: 600, renewals: 1))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "owner")).status == .granted)
            var renewal: String?
            try await until("period 1 begins", within: .seconds(10)) {
                renewal = try pipeline.simulator.serverAPI.signedTransaction("9700-r1")
                return renewal != nil
            }
            // Another account on the same Apple ID sends the renewal first: it is the owner's.
            let other = try await pipeline.terminal(try await pipeline.submit(signed: try #require(renewal), user: "sibling"))
            #expect(other.status == .duplicate && other.transactions.first?.reason == "owned_by_another_account")
            let record = try await pipeline.redis.send("HGETALL", pipeline.store.keys.grant(unit: "wol:9700-w1")).stringDictionary
            #expect(record["user_id"] == "owner")
            let renewed = try await pipeline.fulfilments().filter { $0["event"] == "renewed" }
            #expect(renewed.count == 1 && renewed.first?["user_id"] == "owner")
            // The owner sending it later: a duplicate, already theirs.
            let mine = try await pipeline.terminal(try await pipeline.submit(signed: try #require(renewal), user: "owner"))
            #expect(mine.status == .duplicate)
        }
    }

    @Test func billingRetryIsRecheckedWithBackoffThenGivenUp() async throws {
        try await withPipeline(serverAPI: true, environment: Self.fast.merging(["IAP_RECHECK_MAX": "1"]) { $1 }) { pipeline in
            let jws = try Self.play(pipeline, "9300", renewals: 0, ending: .billingRetry)
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "owner")).status == .granted)
            let key = pipeline.store.keys.subscription(originalTransactionID: "9300")
            // Apple keeps saying billing retry: before/at the end, after it, IAP_RECHECK_MAX more, then the schedule lets go.
            try await until("the re-checks give up", within: .seconds(45)) {
                let due = try await pipeline.store.recheckDue(originalTransactionID: "9300")
                let status = try await pipeline.redis.send("HGET", key, "status").string
                return due == nil && status == "billing_retry"
            }
            // The entitlements turned off by a re-check: when the grant came while the period was on
            // (a slow machine may grant the 1.5 s period after its end, and nothing was ever on).
            let entries = try await pipeline.fulfilments()
            if let changed = entries.first(where: { $0["event"] == "entitlement_changed" && $0["status"] == "billing_retry" }) {
                #expect(changed["source"] == "recheck" && changed["original_transaction_id"] == "9300")
            }
            let record = try await pipeline.redis.send("HGETALL", key).stringDictionary
            #expect(record["status"] == "billing_retry")
            #expect(record["recheck_tries"] == "3")
            #expect(try await pipeline.store.entitlements(user: "owner", catalog: PipelineHarness.catalog).entitlements.isEmpty)
        }
    }

    @Test func withoutServerAPIKeysAReceiptsSubscriptionIsRecheckedByVerifyReceipt() async throws {
        try await withPipeline(environment: Self.fast) { pipeline in
            _ = try Self.play(pipeline, "9600", renewals: 2)
            var legacy = receipt(
                [.init(transactionID: "9600", productID: "vip.monthly", webOrderLineItemID: "9600-w0")], environment: "Sandbox")
            legacy.subscription = "9600"
            #expect(try await pipeline.terminal(try await pipeline.submit(legacy, user: "owner")).status == .granted)
            let key = pipeline.store.keys.subscription(originalTransactionID: "9600")
            #expect(try await pipeline.redis.send("HGET", key, "receipt").string == legacy.receiptData())
            let entries = try await pipeline.fulfilments(until: Self.ended("9600", periods: 3))
            let periods = Self.periods(entries, "9600")
            #expect(periods.keys.sorted() == ["9600", "9600-r1", "9600-r2"])
            #expect(periods.values.allSatisfy { $0.count == 1 && $0[0]["user_id"] == "owner" })
            #expect(periods["9600-r1"]?.first?["source"] == "recheck")
            try await until("Apple's expiry is applied", within: .seconds(15)) {
                try await pipeline.store.recheckDue(originalTransactionID: "9600") == nil
            }
            #expect(try await pipeline.redis.send("HGET", key, "status").string == "expired")
        }
    }

    @Test func aRecheckWithoutServerAPIKeysEndsUnavailableAndIsNotADeadLetter() async throws {
        try await withPipeline(environment: Self.fast) { pipeline in
            let store = pipeline.store
            try await Self.record(store, "9400", expiresAt: Int64(Date().timeIntervalSince1970 * 1000) - 1)
            #expect(try await store.forceRecheck(originalTransactionID: "9400"))
            let entries = try await pipeline.redis.send("LLEN", store.keys.dead).int
            try await until("the re-check ran", within: .seconds(10)) {
                try await pipeline.redis.send("HGET", store.keys.subscription(originalTransactionID: "9400"), "recheck_tries").string == "1"
            }
            let ticketID = try #require(try await pipeline.redis.send("KEYS", store.keys.ticket("recheck-9400-*")).array?.first?.string)
            let ticket = try await pipeline.terminal(String(ticketID.dropFirst(store.keys.ticket("").count)))
            #expect(ticket.status == .rejected && ticket.reason == "recheck_unavailable")
            #expect(try await pipeline.redis.send("LLEN", store.keys.dead).int == entries)
        }
    }
}
