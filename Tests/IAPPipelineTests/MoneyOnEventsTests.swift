import AppleJWS
import Foundation
import IAPOperations
import IAPStages
import PipelineCore
import PipelineTestSupport
import Testing

/// What a purchase cost and how it was sold reach the backend on its `granted` (and `released`)
/// event and stay on its grant record, where Apple said them; a legacy receipt says none.
@Suite struct MoneyOnEventsTests {
    static let expected = [
        "price": "4990", "storefront": "USA", "in_app_ownership_type": "PURCHASED", "offer_type": "2",
        "offer_identifier": "spring.gold", "offer_discount_type": "PAY_UP_FRONT", "purchase_date": "1700000000000",
    ]

    @Test func grantAndReleaseEventsCarryWhatApplSignedOfTheSale() async throws {
        try await withPipeline(environment: ["IAP_CURRENCIES": "USD"]) { pipeline in
            func submit(_ body: [String: Any]) async throws -> Ticket {
                let reply = try await pipeline.post(body)
                #expect(reply.status == 202)
                return try await pipeline.terminal(try #require(reply.json["ticket"] as? String), orHeld: true)
            }
            let usd = try pipeline.authority.signer.sign(payload: SignedFixture.sold("2000000000000201", currency: "USD"))
            #expect(try await submit(["signed_transaction": usd, "user_id": "player-1"]).status == .granted)
            // Held by the currency rule, then released: the release carries the sale too.
            let rub = try pipeline.authority.signer.sign(payload: SignedFixture.sold("2000000000000202", currency: "RUB"))
            #expect(try await submit(["signed_transaction": rub, "user_id": "player-1"]).status == .held)
            #expect(try await pipeline.store.releaseHeld(unit: "2000000000000202", by: "test") == .decided("released"))
            // A legacy receipt: no price, no offer, nothing invented.
            #expect(try await submit(["receipt_data": receipt([gold("m-1")]).receiptData(), "user_id": "player-1", "currency": "USD"]).status == .granted)

            let entries = try await pipeline.fulfilments()
            let granted = try #require(entries.first { $0["transaction_id"] == "2000000000000201" && $0["event"] == "granted" })
            let released = try #require(entries.first { $0["transaction_id"] == "2000000000000202" && $0["event"] == "released" })
            let legacy = try #require(entries.first { $0["transaction_id"] == "m-1" && $0["event"] == "granted" })
            for (name, value) in Self.expected {
                #expect(granted[name] == value, "granted \(name)")
                #expect(released[name] == value, "released \(name)")
                #expect(legacy[name] == nil || name == "in_app_ownership_type" || name == "purchase_date", "legacy \(name)")
            }
            #expect(granted["currency"] == "USD" && released["currency"] == "RUB")
            #expect(legacy["price"] == nil && legacy["offer_type"] == nil && legacy["storefront"] == nil)
            let record = try await pipeline.redis.send("HGETALL", pipeline.configuration.keys.grant(unit: "2000000000000201")).stringDictionary
            #expect(record["price"] == "4990" && record["currency"] == "USD" && record["offer_identifier"] == "spring.gold")
        }
    }

    /// `GET /v1/users/{id}/spend?since=`: what the user spent per currency since then, a refund in
    /// part deducting the items it took back; a legacy receipt counts nothing; bad `since` is a 400.
    @Test func aUsersSpendIsPerCurrencyWithRefundsDeducted() async throws {
        try await withPipeline { pipeline in
            let api = pipeline.simulator.serverAPI
            func buy(_ id: String, currency: String, price: Int64, quantity: Int, purchased: Int64) async throws {
                var transaction = SignedFixture.sold(id, currency: currency)
                transaction.price = price
                transaction.quantity = quantity
                transaction.purchaseDate = purchased
                transaction.type = "Consumable"
                transaction.environment = "Sandbox"
                #expect(try await pipeline.terminal(try await pipeline.submit(signed: try api.register(transaction))).status == .granted)
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try await buy("2000000000000301", currency: "USD", price: 990, quantity: 3, purchased: now - 86_400_000)
            try await buy("2000000000000302", currency: "EUR", price: 4_990, quantity: 1, purchased: now - 3_600_000)
            try await buy("2000000000000303", currency: "USD", price: 1_990, quantity: 1, purchased: now - 40 * 86_400_000)
            #expect(try await pipeline.terminal(try await pipeline.submit(receipt([gold("m-9")]))).status == .granted)
            // A third of the three USD items refunded: one item back.
            let refund = try api.signedNotification(type: "REFUND", transactionID: "2000000000000301", revocationPercentage: 33333)
            let reply = try await pipeline.notify(refund)
            #expect(try await pipeline.terminal(try #require(reply.json["ticket"] as? String)).result == "partially_revoked")

            let since = Date(timeIntervalSince1970: Double(now - 7 * 86_400_000) / 1000).formatted(.iso8601)
            let answer = try await pipeline.get("/v1/users/player-1/spend?since=\(since)")
            #expect(answer.status == 200, "\(answer.json)")
            let currencies = try #require(answer.json["currencies"] as? [String: [String: Int]])
            #expect(currencies["USD"] == ["spent": 2_970, "refunded": 990, "net": 1_980, "purchases": 1])
            #expect(currencies["EUR"] == ["spent": 4_990, "refunded": 0, "net": 4_990, "purchases": 1])
            #expect(answer.json["user_id"] as? String == "player-1")
            // Further back, the older USD purchase counts too.
            let older = Date(timeIntervalSince1970: Double(now - 60 * 86_400_000) / 1000).formatted(.iso8601)
            let all = try await pipeline.get("/v1/users/player-1/spend?since=\(older)")
            #expect((all.json["currencies"] as? [String: [String: Int]])?["USD"]?["net"] == 3_970)
            #expect((try await pipeline.get("/v1/users/nobody/spend?since=\(since)").json["currencies"] as? [String: Any])?.isEmpty == true)
            for (query, code) in [("", "invalid_since"), ("?since=yesterday", "invalid_since"), ("?since=2026-13-01", "invalid_since")] {
                let refused = try await pipeline.get("/v1/users/player-1/spend\(query)")
                #expect(refused.status == 400 && (refused.json["error"] as? [String: Any])?["code"] as? String == code, "\(query)")
            }
        }
    }
}
