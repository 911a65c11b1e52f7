import AppleJWS
import Foundation
import IAPClient
import IAPIntake
import IAPStages
import IAPOperations
import PipelineTestSupport
import Testing

/// The support desk: an order id from a player's email receipt, or a transaction id, finds the
/// purchases at Apple and says where each stands in the books, for a client key scoped `support`
/// only (`IAP_CLIENT_KEYS_FILE`'s object form); any other key is refused with `forbidden_scope`.
@Suite(.serialized) struct SupportRoutesTests {
    static let support = (id: "support-desk", secret: "support-desk-secret-0123456789")
    static let backend = (id: "backend-1", secret: "0123456789abcdef-backend-secret")

    private func withSupportPipeline(_ body: (PipelineHarness) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("client-keys-\(UUID().uuidString).json")
        try #"""
            {"\#(Self.backend.id)": "\#(Self.backend.secret)",
             "\#(Self.support.id)": {"secret": "\#(Self.support.secret)", "scopes": ["support"]}}
            """#.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withPipeline(serverAPI: true, environment: ["IAP_CLIENT_KEYS_FILE": file.path]) { pipeline in
            try await body(pipeline)
        }
    }

    func get(_ pipeline: PipelineHarness, _ path: String, as key: (id: String, secret: String) = support) async throws -> PipelineHarness.Reply {
        try await pipeline.get(path, headers: RequestSigner(keyID: key.id, secret: key.secret).headers(
            method: "GET", target: path, body: Data(), timestamp: Int64(Date().timeIntervalSince1970)))
    }

    static func transaction(_ id: String, original: String? = nil) -> JWSTransaction {
        JWSTransaction(
            transactionID: id, originalTransactionID: original ?? id, bundleID: PipelineHarness.bundleID, productID: "gold.100",
            purchaseDate: Int64(Date().timeIntervalSince1970 * 1000), type: "Consumable", environment: "Production")
    }

    @Test func anOrderIdFindsItsPurchasesAndWhereEachStands() async throws {
        try await withSupportPipeline { pipeline in
            let api = pipeline.simulator.serverAPI
            // One order of two packs: the player's game sent one; the other never arrived.
            let sent = try api.register(Self.transaction("5100000000000001"), orderID: "MK5TZ8Q2R1")
            try api.register(Self.transaction("5100000000000002"), orderID: "MK5TZ8Q2R1")
            let body = try JSONSerialization.data(withJSONObject: ["signed_transaction": sent, "user_id": "player-7"])
            let accepted = try await pipeline.post(raw: body, headers: RequestSigner(keyID: Self.backend.id, secret: Self.backend.secret)
                .headers(method: "POST", target: "/v1/receipts", body: body, timestamp: Int64(Date().timeIntervalSince1970)))
            #expect(accepted.status == 202)
            _ = try await pipeline.terminal(try #require(accepted.json["ticket"] as? String))

            let reply = try await get(pipeline, "/v1/support/orders/MK5TZ8Q2R1")
            #expect(reply.status == 200, "\(reply.json)")
            #expect(reply.json["order_id"] as? String == "MK5TZ8Q2R1")
            let purchases = try #require(reply.json["purchases"] as? [[String: Any]])
            let byID = Dictionary(uniqueKeysWithValues: purchases.map { ($0["transaction_id"] as? String ?? "", $0) })
            let granted = try #require(byID["5100000000000001"])
            #expect(granted["state"] as? String == "granted")
            #expect((granted["grant"] as? [String: Any])?["user_id"] as? String == "player-7")
            #expect((granted["claim"] as? [String: Any])?["status"] as? String == "granted")
            #expect(granted["environment"] as? String == "Production" && granted["unit"] as? String == "5100000000000001")
            let missing = try #require(byID["5100000000000002"])
            #expect(missing["state"] as? String == "unknown" && missing["grant"] is NSNull && missing["claim"] is NSNull)

            // The same by transaction id.
            let one = try await get(pipeline, "/v1/support/transactions/5100000000000001")
            #expect(one.status == 200 && one.json["order_id"] == nil)
            #expect((one.json["purchases"] as? [[String: Any]])?.first?["state"] as? String == "granted")
        }
    }

    /// `iapctl lookup … --grant-to`: the purchase that never arrived is granted once, through the
    /// pipeline's steps, audited `source=support`; asking again gives the same ticket, and another
    /// user can never get it.
    @Test func aPurchaseNobodyWasGrantedIsGrantedOnceBySupport() async throws {
        try await withSupportPipeline { pipeline in
            let api = pipeline.simulator.serverAPI
            try api.register(Self.transaction("5100000000000003"), orderID: "ZZ7Q2R1XK4")
            let lookup = SupportLookup(
                store: pipeline.store, catalog: PipelineHarness.catalog, client: try #require(pipeline.lookupClient),
                signedData: SignedDataVerifier(rootCertificates: try pipeline.configuration.rootCertificates()))
            guard case .success(let before) = await lookup.order("ZZ7Q2R1XK4") else { Issue.record("the order is not found"); return }
            #expect(before.purchases.map(\.state) == ["unknown"])

            let first = try await lookup.grant(transactionID: "5100000000000003", to: "player-9", ticketTTL: .seconds(600))
            #expect(first.created)
            let ticket = try await pipeline.terminal(first.ticket)
            #expect(ticket.status == .granted && ticket.transactions.map(\.outcome) == [.granted])
            let again = try await lookup.grant(transactionID: "5100000000000003", to: "player-9", ticketTTL: .seconds(600))
            #expect(again.ticket == first.ticket && !again.created)
            let thief = try await pipeline.terminal(
                try await lookup.grant(transactionID: "5100000000000003", to: "player-10", ticketTTL: .seconds(600)).ticket)
            #expect(thief.transactions.map(\.outcome) == [.duplicate])

            guard case .success(let after) = await lookup.order("ZZ7Q2R1XK4") else { Issue.record("the order is not found"); return }
            let books = try #require(after.purchases.first)
            #expect(books.state == "granted" && books.grant["user_id"] == "player-9" && books.grant["source"] == "support")
            let sources = try await pipeline.fulfilments().filter { $0["transaction_id"] == "5100000000000003" }.map { $0["source"] }
            #expect(sources == ["support"])
        }
    }

    @Test func whatCannotBeFoundOrMayNotBeAskedIsRefusedWithItsCode() async throws {
        try await withSupportPipeline { pipeline in
            let unknown = try await get(pipeline, "/v1/support/orders/NOSUCHORDER1")
            #expect(unknown.status == 404 && Self.code(unknown) == "order_not_found")
            let badOrder = try await get(pipeline, "/v1/support/orders/MK5-TZ8")
            #expect(badOrder.status == 400 && Self.code(badOrder) == "invalid_order_id")
            let noTransaction = try await get(pipeline, "/v1/support/transactions/5199999999999999")
            #expect(noTransaction.status == 404 && Self.code(noTransaction) == "transaction_not_found")
            let badTransaction = try await get(pipeline, "/v1/support/transactions/abc")
            #expect(badTransaction.status == 400 && Self.code(badTransaction) == "invalid_transaction_id")
            // A game backend's key has no support scope; the support key none for receipts.
            let backend = try await get(pipeline, "/v1/support/orders/MK5TZ8Q2R1", as: Self.backend)
            #expect(backend.status == 403 && Self.code(backend) == "forbidden_scope")
            let body = try JSONSerialization.data(withJSONObject: ["transaction_id": "5100000000000009", "user_id": "player-7"])
            let submit = try await pipeline.post(raw: body, headers: RequestSigner(keyID: Self.support.id, secret: Self.support.secret)
                .headers(method: "POST", target: "/v1/receipts", body: body, timestamp: Int64(Date().timeIntervalSince1970)))
            #expect(submit.status == 403 && Self.code(submit) == "forbidden_scope")
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 0)
            let unsigned = try await pipeline.get("/v1/support/orders/MK5TZ8Q2R1")
            #expect(unsigned.status == 401)
        }
    }

    /// An intake without client keys serves anyone, but never the support routes.
    @Test func anOpenIntakeRefusesTheSupportRoutes() async throws {
        try await withPipeline(startWorkers: false, serverAPI: true) { pipeline in
            let reply = try await pipeline.get("/v1/support/transactions/5100000000000001")
            #expect(reply.status == 403 && Self.code(reply) == "forbidden_scope")
        }
    }

    static func code(_ reply: PipelineHarness.Reply) -> String? { (reply.json["error"] as? [String: Any])?["code"] as? String }
}
