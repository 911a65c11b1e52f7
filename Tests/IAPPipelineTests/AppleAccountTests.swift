import AppleJWS
import AppleSimulator
import Foundation
import PipelineCore
import PipelineTestSupport
import Testing

/// Apple Accounts (StoreKit's `AppTransaction`, `appTransactionId`): a signed app transaction binds
/// its Apple Account to the user who sent it, granting nothing; under
/// `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT` one user too many on an account is told so, and their
/// purchases on it are held.
@Suite(.serialized) struct AppleAccountTests {
    func bind(_ pipeline: PipelineHarness, _ jws: String, user: String) async throws -> Ticket {
        let reply = try await pipeline.post(["signed_app_transaction": jws, "user_id": user])
        #expect(reply.status == 202, "\(reply.json)")
        return try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
    }

    @Test func anAppTransactionBindsItsAppleAccountAndOneUserTooManyHasPurchasesHeld() async throws {
        try await withPipeline(environment: ["IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT": "1"]) { pipeline in
            let signer = pipeline.authority.signer
            let jws = try signer.sign(payload: SignedFixture.appTransaction())
            let alice = try await bind(pipeline, jws, user: "alice")
            #expect(alice.status == .applied && alice.result == "apple_account_bound" && alice.environment == "Production")
            #expect(alice.transactions.isEmpty)
            let bob = try await bind(pipeline, jws, user: "bob")
            #expect(bob.status == .applied && bob.result == "apple_account_shared")
            #expect(try await pipeline.fulfilments().isEmpty, "binding grants nothing")

            // On that Apple Account, bob's purchase waits for an operator; alice's is granted.
            var bought = SignedFixture.transaction("2000000000000021")
            bought.appTransactionID = SignedFixture.appleAccount
            let held = try await pipeline.terminal(try await pipeline.submit(signed: try signer.sign(payload: bought), user: "bob"), orHeld: true)
            #expect(held.status == .held && held.transactions.first?.reason == "apple_account_shared")
            bought.transactionID = "2000000000000022"
            bought.originalTransactionID = "2000000000000022"
            let granted = try await pipeline.terminal(try await pipeline.submit(signed: try signer.sign(payload: bought), user: "alice"))
            #expect(granted.status == .granted)
        }
    }

    @Test func anAppTransactionThatCannotBeTrustedOrNamesNoAccountIsRejected() async throws {
        try await withPipeline { pipeline in
            let forged = try SigningAuthority().signer.sign(payload: SignedFixture.appTransaction())
            let foreign = try pipeline.authority.signer.sign(payload: SignedFixture.appTransaction(bundleID: "com.other.app"))
            let old = try pipeline.authority.signer.sign(payload: SignedFixture.appTransaction(nil))
            for (jws, reason) in [(forged, "invalid_signature"), (foreign, "bundle_mismatch"), (old, "no_app_transaction_id")] {
                let ticket = try await bind(pipeline, jws, user: "carol")
                #expect(ticket.status == .rejected && ticket.reason == reason, "\(reason)")
            }
            // With other evidence, or not a JWS: refused at the door, nothing queued.
            let both = try await pipeline.post([
                "signed_app_transaction": try pipeline.authority.signer.sign(payload: SignedFixture.appTransaction()),
                "signed_transaction": try pipeline.authority.signer.sign(payload: SignedFixture.transaction("2000000000000023")),
                "user_id": "carol",
            ])
            #expect(both.status == 400 && (both.json["error"] as? [String: Any])?["code"] as? String == "conflicting_fields")
            let junk = try await pipeline.post(["signed_app_transaction": "not-a-jws", "user_id": "carol"])
            #expect(junk.status == 400 && (junk.json["error"] as? [String: Any])?["code"] as? String == "invalid_jws")
        }
    }

    /// A legacy receipt does not name its Apple Account: while the limit counts accounts, the
    /// verifier asks Apple (Get App Transaction Info) with one of its transaction ids.
    @Test func aLegacyReceiptsAppleAccountIsAskedOfAppleAndCounts() async throws {
        try await withPipeline(serverAPI: true, environment: ["IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT": "1"]) { pipeline in
            let api = pipeline.simulator.serverAPI
            for id in ["4000000000000001", "4000000000000002"] {
                var known = SignedFixture.transaction(id)
                known.appTransactionID = SignedFixture.appleAccount
                try api.register(known)
            }
            let alice = try await pipeline.terminal(try await pipeline.submit(receipt([gold("4000000000000001")]), user: "alice"))
            #expect(alice.status == .granted)
            let entry = try #require(try await pipeline.fulfilments().first { $0["transaction_id"] == "4000000000000001" })
            #expect(entry["app_transaction_id"] == SignedFixture.appleAccount)
            let bob = try await pipeline.terminal(
                try await pipeline.submit(receipt([gold("4000000000000002")]), user: "bob"), orHeld: true)
            #expect(bob.status == .held && bob.transactions.first?.reason == "apple_account_shared")
            // Apple knows no app transaction for it: granted, its account unknown.
            let carol = try await pipeline.terminal(try await pipeline.submit(receipt([gold("4000000000000003")]), user: "carol"))
            #expect(carol.status == .granted)
            #expect(api.callCounts()["Production app_transaction_info"] == 3)
        }
        // Without the limit nobody asks.
        try await withPipeline(serverAPI: true) { pipeline in
            let dave = try await pipeline.terminal(try await pipeline.submit(receipt([gold("4000000000000004")]), user: "dave"))
            #expect(dave.status == .granted)
            #expect(pipeline.simulator.serverAPI.callCounts()["Production app_transaction_info"] == nil)
        }
    }

    /// A subscription names its Apple Account on its record: from its transaction at the grant,
    /// then from the renewal info Apple sends with a notification.
    @Test func aSubscriptionsRecordKeepsItsAppleAccount() async throws {
        try await withPipeline { pipeline in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            var period = SignedFixture.transaction("5000000000000001", product: "vip.monthly")
            period.webOrderLineItemID = "5000000000000101"
            period.expiresDate = now + 3_600_000
            period.type = "Auto-Renewable Subscription"
            period.appTransactionID = SignedFixture.appleAccount
            let ticket = try await pipeline.terminal(try await pipeline.submit(signed: try pipeline.authority.signer.sign(payload: period)))
            #expect(ticket.status == .granted)
            let key = pipeline.configuration.keys.subscription(originalTransactionID: "5000000000000001")
            #expect(try await pipeline.redis.send("HGET", key, "app_transaction_id").string == SignedFixture.appleAccount)

            // Apple's renewal info names the account too (here another, as after a family change).
            try pipeline.simulator.serverAPI.register(period)
            var renewal = JWSRenewalInfo(originalTransactionID: "5000000000000001", productID: "vip.monthly", autoRenewStatus: 0)
            renewal.appTransactionID = "704289572399999999"
            let signed = try pipeline.simulator.serverAPI.signedNotification(
                type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", transactionID: "5000000000000001", renewal: renewal)
            let stored = try await pipeline.notify(signed)
            #expect(stored.status == 200)
            let applied = try await pipeline.terminal(try #require(stored.json["ticket"] as? String))
            #expect(applied.status == .applied, "\(applied)")
            #expect(try await pipeline.redis.send("HGET", key, "app_transaction_id").string == "704289572399999999")
        }
    }

    /// RESCIND_CONSENT names an Apple Account, not a purchase: its event reaches each user who
    /// bought on or bound that account, in the order they came; an account nobody bound, nobody.
    @Test func anAppleAccountsRescindedConsentReachesItsUsers() async throws {
        try await withPipeline { pipeline in
            let jws = try pipeline.authority.signer.sign(payload: SignedFixture.appTransaction())
            #expect(try await bind(pipeline, jws, user: "alice").result == "apple_account_bound")
            #expect(try await bind(pipeline, jws, user: "bob").result == "apple_account_bound")
            for account in [SignedFixture.appleAccount, "704289572300000000"] {
                let signed = try pipeline.simulator.serverAPI.signedNotification(
                    type: "RESCIND_CONSENT", transactionID: nil, appTransaction: SignedFixture.appTransaction(account))
                let stored = try await pipeline.notify(signed)
                #expect(stored.status == 200)
                #expect(try await pipeline.terminal(try #require(stored.json["ticket"] as? String)).status == .applied)
            }
            let events = try await pipeline.fulfilments(notifications: true).filter { $0["event"] == "consent_rescinded" }
            #expect(events.map { $0["user_id"] ?? "?" } == ["alice", "bob", ""])
            #expect(events.map { $0["app_transaction_id"] ?? "?" } == [SignedFixture.appleAccount, SignedFixture.appleAccount, "704289572300000000"])
        }
    }
}
