import AppleJWS
import AppleSimulator
import Foundation
import PipelineCore
import PipelineTestSupport
import Testing

/// Set App Account Token: a purchase granted without an app account token to a user who has one
/// bound gets that token set at Apple (on the original transaction), retried like any Apple call;
/// a family member's purchase and a purchase with its own token are left alone.
@Suite(.serialized) struct AppAccountTokenTests {
    static func tokenless(_ id: String, ownership: String = "PURCHASED") -> JWSTransaction {
        var transaction = SignedFixture.transaction(id)
        transaction.appAccountToken = nil
        transaction.inAppOwnershipType = ownership
        return transaction
    }

    @Test func aTokenlessPurchaseOfABoundUserGetsTheTokenSetAtAppleOnce() async throws {
        // Apple's fault goes to whichever call comes next: no Finish Transaction errand may take it.
        try await withPipeline(serverAPI: true, environment: ["IAP_FINISH_TRANSACTIONS": "off"]) { pipeline in
            let api = pipeline.simulator.serverAPI
            let token = UUID().uuidString.lowercased()
            #expect(try await pipeline.bind(token: token.uppercased(), to: "alice").status == 200)
            // Apple fails the first call: the errand is retried, then set.
            api.setFaults(SimulatedAPIFaults(serverErrors: 1))
            let bought = try api.register(Self.tokenless("2000000000000031"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: bought, user: "alice")).status == .granted)
            let errand = try await pipeline.terminal("token-2000000000000031")
            #expect(errand.status == .applied && errand.result == "app_account_token_set", "\(errand)")
            #expect(api.appAccountTokensSet(originalTransactionID: "2000000000000031") == [token])
            #expect(api.transaction("2000000000000031")?.appAccountToken == token)
            #expect(api.callCounts()["Production app_account_token"] == 2)

            // A family member's purchase, and one that names its own token: no errand.
            let family = try api.register(Self.tokenless("2000000000000032", ownership: "FAMILY_SHARED"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: family, user: "alice")).status == .granted)
            let own = try api.register(SignedFixture.transaction("2000000000000033"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: own, user: "alice")).status == .granted)
            // A user with no token bound: none either.
            let bobs = try api.register(Self.tokenless("2000000000000034"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: bobs, user: "bob")).status == .granted)
            for id in ["2000000000000032", "2000000000000033", "2000000000000034"] {
                #expect(try await pipeline.readTicket("token-\(id)") == nil, "\(id)")
            }
            #expect(api.appAccountTokensSet(originalTransactionID: "2000000000000032").isEmpty)
            #expect(api.callCounts()["Production app_account_token"] == 2)
        }
    }

    @Test func appleRefusingTheTransactionEndsTheErrandWithItsReasonAndOffSetsNothing() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let api = pipeline.simulator.serverAPI
            #expect(try await pipeline.bind(token: UUID().uuidString, to: "carol").status == 200)
            // Apple does not know it (our sandbox simulator never registered it): transaction_not_found.
            let unknown = try pipeline.authority.signer.sign(payload: Self.tokenless("2000000000000035"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: unknown, user: "carol")).status == .granted)
            let errand = try await pipeline.terminal("token-2000000000000035")
            #expect(errand.status == .applied && errand.result == "transaction_not_found", "\(errand)")
            #expect(api.appAccountTokensSet(originalTransactionID: "2000000000000035").isEmpty)
        }
        try await withPipeline(serverAPI: true, environment: ["IAP_SET_APP_ACCOUNT_TOKENS": "off"]) { pipeline in
            let api = pipeline.simulator.serverAPI
            #expect(try await pipeline.bind(token: UUID().uuidString, to: "dave").status == 200)
            let bought = try api.register(Self.tokenless("2000000000000036"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: bought, user: "dave")).status == .granted)
            #expect(try await pipeline.readTicket("token-2000000000000036") == nil)
            #expect(api.callCounts()["Production app_account_token"] == nil)
        }
    }

    /// A purchase whose Apple-signed `appAccountToken` is another user's (bound by the route, or
    /// by an earlier purchase) is not granted to whoever submits it: rejected
    /// `app_account_token_mismatch`, nothing claimed, and the token's user is granted it after.
    @Test func aPurchaseOfAnotherUsersTokenIsNotGrantedToItsSubmitter() async throws {
        try await withPipeline { pipeline in
            let token = UUID().uuidString.lowercased()
            #expect(try await pipeline.bind(token: token, to: "owner").status == 200)
            var transaction = SignedFixture.transaction("2000000000000041")
            transaction.appAccountToken = token.uppercased()
            let jws = try pipeline.authority.signer.sign(payload: transaction)
            let stolen = try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "thief"))
            #expect(stolen.status == .rejected && stolen.reason == "app_account_token_mismatch", "\(stolen)")
            #expect(stolen.transactions.first?.reason == "app_account_token_mismatch", "\(stolen)")
            let owned = try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "owner"))
            #expect(owned.status == .granted, "\(owned)")

            // A token bound by its first purchase: the next purchase with it, sent for someone else, is refused too.
            let earlier = UUID().uuidString.lowercased()
            var first = SignedFixture.transaction("2000000000000042")
            first.appAccountToken = earlier
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: try pipeline.authority.signer.sign(payload: first), user: "first")).status == .granted)
            var second = SignedFixture.transaction("2000000000000043")
            second.appAccountToken = earlier
            let relayed = try await pipeline.terminal(
                try await pipeline.submit(signed: try pipeline.authority.signer.sign(payload: second), user: "second"))
            #expect(relayed.status == .rejected && relayed.reason == "app_account_token_mismatch", "\(relayed)")

            let grants = try await pipeline.fulfilments().filter { $0["event"] == "granted" }
            #expect(grants.map { "\($0["user_id"] ?? "?") \($0["transaction_id"] ?? "?")" }.sorted()
                == ["first 2000000000000042", "owner 2000000000000041"])
        }
    }
}
