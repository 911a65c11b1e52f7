import AppleJWS
import Foundation
import IAPOperations
import IAPStages
import PipelineCore
import PipelineTestSupport
import Testing

/// `GET /v1/users/{id}`: a user's record in one call, read from the user's own indexes: each
/// purchase as it stands (granted, refunded in part, held, an operator's), newest first and paged;
/// refunds counted; Apple Accounts; consent.
@Suite struct UserRecordTests {
    @Test func aUsersRecordIsOneCallAndPages() async throws {
        try await withPipeline(environment: ["IAP_CURRENCIES": "USD"]) { pipeline in
            let api = pipeline.simulator.serverAPI
            let day: Int64 = 86_400_000
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            func signed(_ id: String, currency: String, quantity: Int = 1, purchased: Int64) throws -> String {
                var transaction = SignedFixture.sold(id, currency: currency)
                transaction.quantity = quantity
                transaction.purchaseDate = purchased
                transaction.type = "Consumable"
                transaction.environment = "Sandbox"
                transaction.appTransactionID = "704000000000009"
                return try api.register(transaction)
            }
            #expect(try await pipeline.terminal(try await pipeline.submit(
                signed: try signed("2000000000000401", currency: "USD", quantity: 3, purchased: now - 3 * day))).status == .granted)
            let held = try await pipeline.post(["signed_transaction": try signed("2000000000000402", currency: "RUB", purchased: now - 2 * day), "user_id": "player-1"])
            #expect(try await pipeline.terminal(try #require(held.json["ticket"] as? String), orHeld: true).status == .held)
            #expect(try await pipeline.store.grantByOperator(id: "comp-1", user: "player-1", product: "gold.100", quantity: 5, by: "ops", note: "sorry", now: now - day) == nil)
            let refund = try await pipeline.notify(try api.signedNotification(type: "REFUND", transactionID: "2000000000000401", revocationPercentage: 33333))
            #expect(try await pipeline.terminal(try #require(refund.json["ticket"] as? String)).result == "partially_revoked")
            try await ConsumptionRequestTests.consent(pipeline, "player-1", true)

            let reply = try await pipeline.get("/v1/users/player-1")
            #expect(reply.status == 200, "\(reply.json)")
            let purchases = try #require(reply.json["purchases"] as? [[String: String]])
            #expect(purchases.map { $0["state"] } == ["granted", "held", "partially_refunded"])
            #expect(purchases.map { $0["unit"] } == ["operator:comp-1", "2000000000000402", "2000000000000401"])
            #expect(purchases[0]["source"] == "operator" && purchases[0]["quantity"] == "5")
            #expect(purchases[1]["reason"] == "currency_not_allowed" && purchases[1]["currency"] == "RUB")
            #expect(purchases[2]["revoked_quantity"] == "1" && purchases[2]["price"] == "4990" && purchases[2]["quantity"] == "3")
            #expect(reply.json["next_before"] == nil)
            #expect((reply.json["refunds"] as? [String: Int]) == ["whole": 0, "prorated": 33333])
            #expect(reply.json["apple_accounts"] as? [String] == ["704000000000009"])
            #expect(reply.json["consent"] as? Bool == true)

            // Paged: two, then the rest from where the first page ended.
            let first = try await pipeline.get("/v1/users/player-1?limit=2")
            #expect((first.json["purchases"] as? [[String: String]])?.count == 2)
            let before = try #require(first.json["next_before"] as? String)
            let second = try await pipeline.get("/v1/users/player-1?limit=2&before=\(before)")
            #expect((second.json["purchases"] as? [[String: String]])?.map { $0["unit"] } == ["2000000000000401"])
            #expect(second.json["next_before"] == nil)
            // Nobody: an empty record, not a 404; bad paging is a 400.
            let nobody = try await pipeline.get("/v1/users/nobody")
            #expect(nobody.status == 200 && (nobody.json["purchases"] as? [Any])?.isEmpty == true && nobody.json["consent"] == nil)
            for (query, code) in [("?limit=0", "invalid_limit"), ("?limit=201", "invalid_limit"), ("?before=x", "invalid_before")] {
                let refused = try await pipeline.get("/v1/users/player-1\(query)")
                #expect(refused.status == 400 && (refused.json["error"] as? [String: Any])?["code"] as? String == code, "\(query)")
            }
        }
    }
}
