import AppleJWS
import Foundation
import PipelineTestSupport
import Testing

/// `POST /v1/users/{id}/grants` through the intake: a 7-day grant shows in the entitlements beside
/// a purchase of the same entitlement, is made once per `grant_id`, can be taken back, and a short
/// one ends by itself in the running granter (one `entitlement_ended`); bad orders are `400`.
@Suite(.serialized) struct TimedGrantEndToEndTests {
    static func grant(_ pipeline: PipelineHarness, _ user: String, _ body: [String: Any]) async throws -> PipelineHarness.Reply {
        try await pipeline.post(raw: try JSONSerialization.data(withJSONObject: body), path: "/v1/users/\(user)/grants")
    }

    static func entitlements(_ pipeline: PipelineHarness, _ user: String) async throws -> [String] {
        let reply = try await pipeline.get("/v1/users/\(user)/entitlements")
        return (reply.json["entitlements"] as? [[String: Any]] ?? []).map {
            "\($0["entitlement"]!) \(($0["grant_id"] as? String) ?? ($0["product_id"] as? String) ?? "?")"
        }
    }

    @Test func aSevenDayGrantShowsBesideAPurchaseAndIsMadeOnce() async throws {
        try await EntitlementEndToEndTests.withCatalog { pipeline in
            try await EntitlementEndToEndTests.subscribe(pipeline, "7700000000000001", user: "p1")
            let order: [String: Any] = ["grant_id": "outage-42", "entitlement": "premium", "duration_s": 7 * 86_400, "reason": "outage compensation"]
            let made = try await Self.grant(pipeline, "p1", order)
            #expect(made.status == 201 && made.json["status"] as? String == "active" && made.json["source"] as? String == "api", "\(made.json)")
            let until = try #require(made.json["until"] as? String)
            #expect(try await Self.entitlements(pipeline, "p1") == ["no_ads vip.monthly", "premium outage-42", "premium vip.monthly"])
            let row = try await pipeline.get("/v1/users/p1/entitlements").json["entitlements"] as? [[String: Any]]
            #expect(row?.first { $0["grant_id"] as? String == "outage-42" }?["expires_at"] as? String == until)
            // The same order again: the same grant; another under the id: refused.
            let again = try await Self.grant(pipeline, "p1", order)
            #expect(again.status == 200 && again.json["until"] as? String == until)
            var other = order
            other["entitlement"] = "no_ads"
            let taken = try await Self.grant(pipeline, "p1", other)
            #expect(taken.status == 409 && OfferSignatureTests.code(taken) == "grant_id_taken")
            let list = try await pipeline.get("/v1/users/p1/grants")
            #expect((list.json["grants"] as? [[String: Any]])?.count == 1)

            // Taken back: gone from the entitlements, the purchase's stay.
            let back = try await pipeline.post(raw: Data(), contentType: nil, path: "/v1/users/p1/grants/outage-42", method: .DELETE)
            #expect(back.status == 200 && back.json["status"] as? String == "ended" && back.json["ended_by"] as? String == "revoked", "\(back.json)")
            #expect(try await Self.entitlements(pipeline, "p1") == ["no_ads vip.monthly", "premium vip.monthly"])
            let missing = try await pipeline.post(raw: Data(), contentType: nil, path: "/v1/users/p1/grants/nope", method: .DELETE)
            #expect(missing.status == 404 && OfferSignatureTests.code(missing) == "grant_not_found")
            let events = try await pipeline.fulfilments().filter { $0["grant_id"] != nil }
            #expect(events.map { "\($0["event"]!) \($0["grant_id"] ?? "")" } == ["entitlement_granted outage-42", "entitlement_ended outage-42"])
        }
    }

    @Test func aShortGrantEndsByItselfOnce() async throws {
        try await EntitlementEndToEndTests.withCatalog { pipeline in
            let made = try await Self.grant(pipeline, "p2", ["grant_id": "flash", "entitlement": "level_pack", "duration_s": 1, "reason": "promo"])
            #expect(made.status == 201, "\(made.json)")
            // The running granter's housekeeping ends it: awaited on the stream, not on a clock.
            let seen = try await pipeline.fulfilments(until: { entries in entries.contains { $0["event"] == "entitlement_ended" } })
            let ended = seen.filter { $0["event"] == "entitlement_ended" }
            #expect(ended.count == 1 && ended[0]["ended_by"] == "expired" && ended[0]["user_id"] == "p2")
            #expect(try await Self.entitlements(pipeline, "p2").isEmpty)
            let grants = try await pipeline.get("/v1/users/p2/grants").json["grants"] as? [[String: Any]]
            #expect(grants?.first?["status"] as? String == "ended")
        }
    }

    @Test func aBadOrderIsRefusedAndNothingStored() async throws {
        let orders: [([String: Any], String)] = [
            (["entitlement": "premium", "duration_s": 60, "reason": "r"], "missing_field"),
            (["grant_id": "a", "entitlement": "gold", "duration_s": 60, "reason": "r"], "unknown_entitlement"),
            (["grant_id": "a", "entitlement": "premium", "until": "2020-01-01T00:00:00Z", "reason": "r"], "invalid_until"),
            (["grant_id": "a", "entitlement": "premium", "duration_s": 400 * 86_400, "reason": "r"], "invalid_until"),
            (["grant_id": "a", "entitlement": "premium", "reason": "r"], "invalid_until"),
            (["grant_id": "a", "entitlement": "premium", "until": "soon", "reason": "r"], "invalid_until"),
            (["grant_id": "a", "entitlement": "premium", "duration_s": -5, "reason": "r"], "invalid_until"),
            (["grant_id": "a b", "entitlement": "premium", "duration_s": 60, "reason": "r"], "invalid_grant_id"),
        ]
        try await EntitlementEndToEndTests.withCatalog { pipeline in
            for (order, code) in orders {
                let refused = try await Self.grant(pipeline, "p3", order)
                #expect(refused.status == 400 && OfferSignatureTests.code(refused) == code, "\(order): \(refused.json)")
            }
            #expect(try await pipeline.storedKeys().filter { $0.contains("timed-grant") }.isEmpty)
        }
    }
}
