import AppleJWS
import AppleReceipt
import AppleSimulator
import Foundation
import IAPOperations
import IAPSettings
import IAPStages
import PipelineCore
import PipelineTestSupport
import Testing

/// Adopting a live game (issue 54): a cutover per app (`IAP_ADOPTED_AT`, `adopted_at`), and
/// what a purchase made before it that the books do not know gets (`IAP_PRE_ADOPTION`): recorded
/// and owned with an `adopted` event instead of `granted`, held `pre_adoption`, or granted.
@Suite(.serialized) struct AdoptionTests {
    static let account = "705000000000054"
    static let day: Int64 = 86_400_000

    /// A player with two years of history at Apple, and a cutover ten days ago: the subscription's
    /// current period (five days old) and anything bought since are after it.
    static func player(first: Int64, now: Int64) -> SimulatedPlayer {
        SimulatedPlayer(appTransactionID: account, bundleID: PipelineHarness.bundleID, firstTransactionID: first, now: now)
    }

    static func iso(_ ms: Int64) -> String {
        Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601)
    }

    func sync(_ pipeline: PipelineHarness, user: String) async throws -> Ticket {
        let jws = try pipeline.authority.signer.sign(payload: SignedFixture.appTransaction(Self.account))
        let reply = try await pipeline.post(
            raw: try JSONSerialization.data(withJSONObject: ["signed_app_transaction": jws]), path: "/v1/users/\(user)/sync")
        #expect(reply.status == 202, "\(reply.json)")
        return try await pipeline.terminal(try #require(reply.json["ticket"] as? String), orHeld: true)
    }

    @Test func aPlayerWithTwoYearsOfHistorySyncsWithEveryOldPurchaseAdoptedAndNothingGrantedTwice() async throws {
        let now = currentTimeMs()
        let cutover = now - 10 * Self.day
        try await withPipeline(serverAPI: true, environment: ["IAP_ADOPTED_AT": Self.iso(cutover)]) { pipeline in
            let api = pipeline.simulator.serverAPI
            let history = try api.registerPlayer(Self.player(first: 2_000_000_000_054_000, now: now))
            // Bought after the cutover: a consumable the client never sent.
            var fresh = SyncTests.unsent("2000000000054999")
            fresh.appTransactionID = Self.account
            _ = try api.register(fresh)

            let ticket = try await sync(pipeline, user: "pat")
            #expect(ticket.status == .granted, "\(ticket)")
            let outcomes = Dictionary(uniqueKeysWithValues: ticket.transactions.map { ($0.transactionID, $0.outcome) })
            let before = history.filter { ($0.purchaseDate ?? 0) < cutover }
            let current = try #require(history.last)
            #expect(before.count == history.count - 1 && (current.purchaseDate ?? 0) > cutover)
            #expect(before.allSatisfy { outcomes[$0.transactionID] == .adopted }, "\(outcomes)")
            #expect(outcomes[current.transactionID] == .granted && outcomes[fresh.transactionID] == .granted)

            // The stream: one `adopted` a purchase made before the cutover, not one `granted` of them;
            // the current period is an ordinary renewal, the fresh purchase an ordinary grant.
            let entries = try await pipeline.fulfilments()
            #expect(entries.filter { $0["event"] == "adopted" }.compactMap { $0["transaction_id"] }.sorted()
                == before.map(\.transactionID).sorted())
            #expect(entries.filter { $0["event"] == "granted" }.compactMap { $0["transaction_id"] } == [fresh.transactionID])
            #expect(entries.filter { $0["event"] == "renewed" }.compactMap { $0["transaction_id"] } == [current.transactionID])
            #expect(entries.filter { $0["event"] == "adopted" }.allSatisfy { $0["user_id"] == "pat" && $0["source"] == "sync" })

            // Owned as granted: the non-consumable's and the subscription's entitlements are active.
            let entitlements = try await pipeline.store.entitlements(user: "pat", catalog: PipelineHarness.catalog)
            #expect(Set(entitlements.entitlements.map(\.entitlement)) == ["level_pack", "premium", "no_ads"])
            let pack = try #require(history.first { $0.productID == "level.pack" })
            let record = try await pipeline.redis.send("HGETALL", pipeline.configuration.keys.grant(
                unit: pack.originalTransactionID, originalTransactionID: pack.originalTransactionID)).stringDictionary
            #expect(record["adopted"] == "1" && record["user_id"] == "pat")

            // The client sends an old purchase now: the books know it.
            let old = try await pipeline.terminal(try await pipeline.submit(signed: try api.register(history[3]), user: "pat"))
            #expect(old.status == .duplicate && old.transactions.map(\.outcome) == [.duplicate], "\(old)")
            // A later sync finds nothing new.
            let again = try await sync(pipeline, user: "pat")
            #expect(again.status == .applied && again.transactions.isEmpty, "\(again)")

            // Apple reports an old purchase nobody sent (a notification): adopted to its Apple Account's player.
            var reported = SyncTests.unsent("2000000000054998")
            reported.appTransactionID = Self.account
            reported.purchaseDate = now - 100 * Self.day
            _ = try api.register(reported)
            let charge = try await pipeline.notify(try api.signedNotification(type: "ONE_TIME_CHARGE", transactionID: reported.transactionID))
            _ = try await pipeline.terminal(try #require(charge.json["ticket"] as? String))
            let told = try await pipeline.fulfilments(until: { $0.contains { $0["transaction_id"] == reported.transactionID } })
            #expect(told.filter { $0["transaction_id"] == reported.transactionID }.map { $0["event"] } == ["adopted"])

            // A refund after the cutover of a purchase made before it is an ordinary revocation.
            let refund = try await pipeline.notify(try api.signedNotification(type: "REFUND", transactionID: pack.transactionID))
            #expect(try await pipeline.terminal(try #require(refund.json["ticket"] as? String)).result == "revoked")
            let after = try await pipeline.fulfilments()
            #expect(after.filter { $0["event"] == "revoked" }.compactMap { $0["transaction_id"] } == [pack.transactionID])
            #expect(after.filter { $0["event"] == "granted" }.count == 1)
        }
    }

    /// `POST /v1/users/{id}/sync` with `"dry_run": true`: what a sync would do, on the ticket;
    /// nothing claimed, seated or granted, and the real sync after it reads Apple's whole history.
    @Test func aDryRunSyncSaysWhatASyncWouldDoAndWritesNothing() async throws {
        let now = currentTimeMs()
        let cutover = now - 10 * Self.day
        try await withPipeline(serverAPI: true, environment: ["IAP_ADOPTED_AT": Self.iso(cutover)]) { pipeline in
            let api = pipeline.simulator.serverAPI
            let history = try api.registerPlayer(Self.player(first: 2_000_000_000_056_000, now: now))
            let jws = try pipeline.authority.signer.sign(payload: SignedFixture.appTransaction(Self.account))
            func post(_ body: [String: Any]) async throws -> PipelineHarness.Reply {
                try await pipeline.post(raw: try JSONSerialization.data(withJSONObject: body), path: "/v1/users/rae/sync")
            }
            let bad = try await post(["signed_app_transaction": jws, "dry_run": "yes"])
            #expect(bad.status == 400 && (bad.json["error"] as? [String: Any])?["code"] as? String == "invalid_dry_run", "\(bad.json)")
            let reply = try await post(["signed_app_transaction": jws, "dry_run": true])
            #expect(reply.status == 202, "\(reply.json)")
            let dry = try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
            #expect(dry.status == .applied && dry.result == "dry_run", "\(dry)")
            let outcomes = Dictionary(uniqueKeysWithValues: dry.transactions.map { ($0.transactionID, $0.outcome) })
            #expect(outcomes.count == history.count)
            #expect(history.filter { ($0.purchaseDate ?? 0) < cutover }.allSatisfy { outcomes[$0.transactionID] == .adopted })
            #expect(outcomes[try #require(history.last).transactionID] == .granted)
            // Nothing written: no event, no claim, no seat.
            #expect(try await pipeline.fulfilments().isEmpty)
            #expect(try await pipeline.store.appleAccountUsers(Self.account).isEmpty)
            let first = try #require(history.first)
            #expect(try await pipeline.redis.send("EXISTS", pipeline.configuration.keys.claim(
                unit: first.transactionID, originalTransactionID: first.originalTransactionID)).int == 0)
            // The real sync, in the same minute, is not answered by the dry run's ticket and reads everything.
            let real = try await post(["signed_app_transaction": jws])
            #expect(real.json["ticket"] as? String != reply.json["ticket"] as? String)
            let ticket = try await pipeline.terminal(try #require(real.json["ticket"] as? String))
            #expect(ticket.transactions.map(\.outcome) == dry.transactions.map(\.outcome), "\(ticket)")
            #expect(try await pipeline.fulfilments().filter { $0["event"] == "adopted" }.count == history.count - 1)
        }
    }

    @Test func heldForAnOperatorOrGrantedAsNewAsTheSettingSays() async throws {
        let now = currentTimeMs()
        for (mode, expected) in [("hold", PurchaseOutcome.held), ("grant", .granted)] {
            try await withPipeline(
                serverAPI: true, environment: ["IAP_ADOPTED_AT": Self.iso(now - Self.day), "IAP_PRE_ADOPTION": mode]
            ) { pipeline in
                let api = pipeline.simulator.serverAPI
                var old = SyncTests.unsent("2000000000054100")
                old.appTransactionID = Self.account
                old.purchaseDate = now - 400 * Self.day
                _ = try api.register(old)
                var fresh = SyncTests.unsent("2000000000054101")
                fresh.appTransactionID = Self.account
                _ = try api.register(fresh)
                let ticket = try await sync(pipeline, user: "quinn")
                let outcomes = Dictionary(uniqueKeysWithValues: ticket.transactions.map { ($0.transactionID, $0.outcome) })
                #expect(outcomes == [old.transactionID: expected, fresh.transactionID: .granted], "\(mode): \(ticket)")
                let entries = try await pipeline.fulfilments()
                #expect(entries.filter { $0["event"] == "adopted" }.isEmpty)
                if mode == "hold" {
                    let held = try await pipeline.store.heldPurchases(limit: 10)
                    #expect(held.map(\.transactionID) == [old.transactionID] && held.map(\.reason) == [ReasonCode.preAdoption])
                    #expect(entries.filter { $0["event"] == "granted" }.compactMap { $0["transaction_id"] } == [fresh.transactionID])
                } else {
                    #expect(entries.filter { $0["event"] == "granted" }.count == 2)
                }
            }
        }
    }

    /// The dedupe stage's rule on its own: which date counts, per kind.
    @Test func aPurchaseIsPreAdoptionByItsOwnDateAndANonConsumableByItsOriginalPurchase() {
        let adoption = Adoption(cutover: 1_000, cutovers: ["com.other.app": 5_000], treatment: .record)
        var restore = InAppTransaction(transactionID: "2", originalTransactionID: "1", productID: "p", purchaseDateMs: "2000")
        restore.originalPurchaseDateMs = "500"
        // A restore after the cutover of a non-consumable bought before it: its original purchase counts.
        #expect(adoption.preAdoption(restore, type: .nonConsumable, app: "com.example.game") == .record)
        // A consumable or a subscription period: its own date.
        #expect(adoption.preAdoption(restore, type: .consumable, app: "com.example.game") == nil)
        #expect(adoption.preAdoption(restore, type: .autoRenewable, app: "com.example.game") == nil)
        // Another app's own cutover.
        #expect(adoption.preAdoption(restore, type: .consumable, app: "com.other.app") == .record)
        // No date from Apple, or no cutover: as today.
        #expect(adoption.preAdoption(InAppTransaction(transactionID: "3", productID: "p"), type: .consumable, app: nil) == nil)
        #expect(Adoption.none.preAdoption(restore, type: .nonConsumable, app: nil) == nil)
    }

    @Test func aCutoverThatIsNotATimeOrIsInTheFutureRefusesToStart() throws {
        #expect(Adoption.parse("2026-11-01T00:00:00Z") == 1_793_491_200_000)
        #expect(Adoption.parse("2026-11-01T08:00:00+08:00") == 1_793_491_200_000)
        #expect(Adoption.parse("2026-11-01T00:00:00.250Z") == 1_793_491_200_250)
        for bad in ["2026-11-01", "yesterday", "1793491200000", ""] { #expect(Adoption.parse(bad) == nil, "\(bad)") }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for (value, problem) in [("soon", "not an ISO 8601 time"), ("2030-01-01T00:00:00Z", "in the future")] {
            #expect {
                _ = try Adoption(reading: SettingSource(environment: ["IAP_ADOPTED_AT": value], flags: [:]), apps: nil, now: now)
            } throws: { error in
                let text = "\(error)"
                return text.contains("IAP_ADOPTED_AT") && text.contains(problem)
            }
        }
        for (value, problem) in [("\"soon\"", "not an ISO 8601 time"), ("\"2030-01-01T00:00:00Z\"", "in the future"), ("17", "not an ISO 8601")] {
            #expect {
                _ = try AppsFile(text: #"{"com.acme.game": {"adopted_at": \#(value)}}"#, now: now)
            } throws: { error in
                let text = "\(error)"
                return text.contains("com.acme.game: adopted_at") && text.contains(problem)
            }
        }
        let apps = try AppsFile(text: #"{"com.acme.game": {"adopted_at": "2026-11-01T00:00:00Z"}, "com.acme.other": {}}"#, now: now)
        let adoption = try Adoption(
            reading: SettingSource(environment: ["IAP_ADOPTED_AT": "2026-10-01T00:00:00Z", "IAP_PRE_ADOPTION": "hold"], flags: [:]),
            apps: apps, now: now)
        #expect(adoption.cutover(ofApp: "com.acme.game") == 1_793_491_200_000)
        #expect(adoption.cutover(ofApp: "com.acme.other") == Adoption.parse("2026-10-01T00:00:00Z"))
        #expect(adoption.treatment == .hold)
    }
}
