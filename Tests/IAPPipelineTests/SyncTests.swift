import AppleJWS
import AppleSimulator
import Foundation
import IAPOperations
import IAPStages
import PipelineCore
import PipelineTestSupport
import TestSupport
import Testing

/// Sync at login (`POST /v1/users/{id}/sync`): the user's Apple Account is seated on them and
/// every purchase Apple has of it that the books do not know (the client paid and never told us)
/// is granted once (source `sync`); the ones the books know are left alone; a later sync asks
/// Apple only for what changed since (the revision kept) and grants nothing twice.
@Suite(.serialized) struct SyncTests {
    static let account = "705000000000001"

    /// A purchase on the Apple Account that the client never sent (no app account token).
    static func unsent(_ id: String, product: String = "gold.100") -> JWSTransaction {
        var transaction = SignedFixture.transaction(id, product: product)
        transaction.appAccountToken = nil
        transaction.appTransactionID = account
        return transaction
    }

    func sync(_ pipeline: PipelineHarness, user: String) async throws -> PipelineHarness.Reply {
        let jws = try pipeline.authority.signer.sign(payload: SignedFixture.appTransaction(Self.account))
        return try await pipeline.post(
            raw: try JSONSerialization.data(withJSONObject: ["signed_app_transaction": jws]), path: "/v1/users/\(user)/sync")
    }

    @Test func twoPurchasesTheClientNeverSentAreGrantedOnceAndASecondSyncGrantsNothing() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let api = pipeline.simulator.serverAPI
            // One purchase the client did send (known), two it never did.
            let known = try api.register(Self.unsent("2000000000000061"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: known, user: "alice")).status == .granted)
            _ = try api.register(Self.unsent("2000000000000062"))
            _ = try api.register(Self.unsent("2000000000000063", product: "level.pack"))
            // Another Apple Account's purchase is not this customer's.
            var other = Self.unsent("2000000000000064")
            other.appTransactionID = "705000000000999"
            _ = try api.register(other)

            let first = try await sync(pipeline, user: "alice")
            #expect(first.status == 202, "\(first.json)")
            let ticket = try await pipeline.terminal(try #require(first.json["ticket"] as? String))
            #expect(ticket.status == .granted, "\(ticket)")
            let outcomes = Dictionary(uniqueKeysWithValues: ticket.transactions.map { ($0.transactionID, $0.outcome.rawValue) })
            #expect(outcomes == ["2000000000000061": "duplicate", "2000000000000062": "granted", "2000000000000063": "granted"])
            let granted = try await pipeline.fulfilments().filter { $0["event"] == "granted" }
            #expect(granted.filter { $0["source"] == "sync" }.compactMap { $0["transaction_id"] }.sorted()
                == ["2000000000000062", "2000000000000063"])
            #expect(granted.allSatisfy { $0["user_id"] == "alice" })

            #expect(api.callCounts()["Production transaction_history"] == 1)

            // Again (a later login): Apple is asked only for what changed since (the revision
            // kept), finds nothing, and nothing is granted twice.
            let second = try await sync(pipeline, user: "alice")
            #expect(second.status == 202 && second.json["ticket"] as? String != first.json["ticket"] as? String)
            let again = try await pipeline.terminal(try #require(second.json["ticket"] as? String))
            #expect(again.status == .applied && again.result == "apple_account_bound" && again.transactions.isEmpty, "\(again)")
            #expect(api.callCounts()["Production transaction_history"] == 2)

            // A purchase made since: the next sync reads and grants it alone.
            _ = try api.register(Self.unsent("2000000000000065"))
            let third = try await pipeline.terminal(try #require(try await sync(pipeline, user: "alice").json["ticket"] as? String))
            #expect(third.status == .granted && third.transactions.map(\.transactionID) == ["2000000000000065"], "\(third)")

            // Another user on the same Apple Account: seated, and nothing of alice's moves to them.
            let bobs = try await pipeline.terminal(try #require(try await sync(pipeline, user: "bob").json["ticket"] as? String))
            #expect(bobs.status == .applied, "\(bobs)")
            #expect(try await pipeline.fulfilments().filter { $0["user_id"] == "bob" }.isEmpty)
            #expect(Set(try await pipeline.store.appleAccountUsers(Self.account)) == ["alice", "bob"])
            #expect(try await pipeline.fulfilments().filter { $0["event"] == "granted" }.count == granted.count + 1)
        }
    }

    /// `iapctl user sync`: the operator names the Apple Account; nothing signed, Apple's history is the evidence.
    @Test func anOperatorsSyncGrantsWhatTheClientNeverSent() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            _ = try pipeline.simulator.serverAPI.register(Self.unsent("2000000000000066"))
            // The clock is handed in: both submissions fall in one window whatever the machine's speed.
            let windowStart = currentTimeMs() / 60_000 * 60_000
            let (ticket, created) = try await pipeline.store.submitSync(
                user: "erin", appleAccount: Self.account, environment: "Production", ttl: .seconds(600), now: windowStart)
            #expect(created)
            let synced = try await pipeline.terminal(ticket)
            #expect(synced.status == .granted && synced.transactions.map(\.transactionID) == ["2000000000000066"], "\(synced)")
            #expect(try await pipeline.store.appleAccountUsers(Self.account) == ["erin"])
            // The same again within the minute: the same ticket.
            let again = try await pipeline.store.submitSync(
                user: "erin", appleAccount: Self.account, environment: "Production", ttl: .seconds(600), now: windowStart + 59_999)
            #expect(again.ticket == ticket && !again.created)
            // The next window reads Apple again: a new ticket, and nothing granted twice.
            let next = try await pipeline.store.submitSync(
                user: "erin", appleAccount: Self.account, environment: "Production", ttl: .seconds(600), now: windowStart + 60_000)
            #expect(next.ticket != ticket && next.created)
            let reread = try await pipeline.terminal(next.ticket)
            #expect(reread.status == .applied && reread.transactions.isEmpty, "\(reread)")
        }
    }

    @Test func anAccountWithNothingAtAppleIsSeatedAndBadSyncsAreRefusedAtTheDoor() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let reply = try await sync(pipeline, user: "carol")
            let ticket = try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
            #expect(ticket.status == .applied && ticket.result == "apple_account_bound", "\(ticket)")
            #expect(try await pipeline.store.appleAccountUsers(Self.account) == ["carol"])
            for (body, code) in [
                (["signed_app_transaction": "not-a-jws"], "invalid_jws"), ([:], "missing_field"),
                (["signed_app_transaction": 7] as [String: Any], "wrong_type"),
            ] as [([String: Any], String)] {
                let refused = try await pipeline.post(raw: try JSONSerialization.data(withJSONObject: body), path: "/v1/users/carol/sync")
                #expect(refused.status == 400 && (refused.json["error"] as? [String: Any])?["code"] as? String == code, "\(refused.json)")
            }
        }
        // Without Server API keys there is nobody to ask.
        try await withPipeline { pipeline in
            let refused = try await sync(pipeline, user: "dave")
            #expect(refused.status == 400 && (refused.json["error"] as? [String: Any])?["code"] as? String == "server_api_not_configured")
        }
    }

    /// The account's history revision moves on only once what was read is claimed: a sync job lost
    /// between verify and dedupe (a failover that loses its forward, a crash) leaves it where it
    /// was, and the next sync reads those purchases again and grants them. (Kept by verify right
    /// after its forward, the revision once outlived the job in a Sentinel drill, and the next sync
    /// read nothing: 39 purchases of an adopted player never reached the books.)
    @Test func aSyncLostBeforeItsClaimsLeavesTheRevisionAndTheNextSyncGrantsItsPurchases() async throws {
        try await withPipeline(startWorkers: false, serverAPI: true) { pipeline in
            let api = pipeline.simulator.serverAPI
            _ = try api.register(Self.unsent("2000000000000071"))
            _ = try api.register(Self.unsent("2000000000000072", product: "level.pack"))
            pipeline.start(.verify)
            let first = try #require(try await sync(pipeline, user: "erin").json["ticket"] as? String)
            let dedupeQueue = pipeline.store.keys.queue(.dedupe)
            try await until("verify read Apple's history and forwarded the job") { try await pipeline.length(dedupeQueue) == 1 }
            #expect(try await pipeline.store.historyRevision(ofAppleAccount: Self.account, environment: "Production") == nil)
            // The job is lost on its way to dedupe.
            _ = try await pipeline.redis.send("DEL", dedupeQueue)
            #expect(try await pipeline.readTicket(first)?.status.isTerminal == false)

            for stage in [Stage.dedupe, .grant] { pipeline.start(stage) }
            let again = try await pipeline.terminal(try #require(try await sync(pipeline, user: "erin").json["ticket"] as? String))
            #expect(again.status == .granted && again.transactions.map(\.transactionID).sorted() == ["2000000000000071", "2000000000000072"],
                "\(again)")
            // Now kept: a third sync reads only what is newer, and grants nothing.
            #expect(try await pipeline.store.historyRevision(ofAppleAccount: Self.account, environment: "Production") != nil)
            let third = try await pipeline.terminal(try #require(try await sync(pipeline, user: "erin").json["ticket"] as? String))
            #expect(third.status == .applied && third.transactions.isEmpty, "\(third)")
        }
    }

    /// A sync whose read of Apple's history fails (a 500, a failover under the rate limiter) is
    /// retried as it was taken, a verify job, and the retry grants the purchases. (The retry once
    /// parked the job as it would have moved on, a dedupe job without a receipt: it came back as a
    /// plain binding, `apple_account_bound`, and every purchase the read would have found was
    /// lost: 39 of an adopted player in a loaded Sentinel drill.) Both ways in: the app's signed
    /// app transaction and the operator's named account.
    @Test func aSyncWhoseHistoryReadFailsIsRetriedAsTakenAndGrantsItsPurchases() async throws {
        // The fleet's Apple breaker on (five failures open it): the failed read is told to it.
        try await withPipeline(serverAPI: true, environment: ["IAP_APPLE_BREAKER_FAILURES": "5"]) { pipeline in
            let api = pipeline.simulator.serverAPI
            _ = try api.register(Self.unsent("2000000000000081"))
            api.setFaults(SimulatedAPIFaults(serverErrors: 1))
            let signed = try await pipeline.terminal(try #require(try await sync(pipeline, user: "frank").json["ticket"] as? String))
            #expect(signed.status == .granted && signed.transactions.map(\.transactionID) == ["2000000000000081"], "\(signed)")
            #expect(api.callCounts()["Production transaction_history"] == 2)
            // The failed read is Apple's failure, told to the fleet's breaker like any Server API call's.
            #expect(try await pipeline.store.appleBreakerState(.serverAPI)["last_reason"]?.hasPrefix("apple_api_") == true)
            // The consumable's Finish Transaction errand asks Apple too: done before the next fault.
            #expect(try await pipeline.terminal("finish-2000000000000081").status == .applied)

            _ = try api.register(Self.unsent("2000000000000082", product: "level.pack"))
            api.setFaults(SimulatedAPIFaults(serverErrors: 1))
            let (ticket, _) = try await pipeline.store.submitSync(
                user: "frank", appleAccount: Self.account, environment: "Production", ttl: .seconds(600))
            let named = try await pipeline.terminal(ticket)
            #expect(named.status == .granted && named.transactions.map(\.transactionID) == ["2000000000000082"], "\(named)")
            #expect(api.callCounts()["Production transaction_history"] == 4)
            let granted = try await pipeline.fulfilments().filter { $0["event"] == "granted" }.compactMap { $0["transaction_id"] }
            #expect(granted.sorted() == ["2000000000000081", "2000000000000082"])
        }
    }
}
