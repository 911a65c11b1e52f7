import AppleJWS
import AppleSimulator
@preconcurrency import Crypto
import AsyncHTTPClient
import Foundation
import IAPClient
import IAPIntake
import IAPSettings
import IAPStages
import IAPOperations
import NIOCore
import PipelineTestSupport
import Testing

/// `POST /v1/offers/signatures`: each kind signed only for those the catalog's rule allows, read
/// from the books (never had the group, had it and lapsed, has it now; on the user or on their
/// Apple Account), and taken by StoreKit as apple-sim plays its check (`/control/offers/check`).
@Suite(.serialized) struct OfferSignatureTests {
    static let keyID = "OFFERKEY01"

    /// A pipeline whose intake signs offers (the harness's catalog lists three on vip.monthly) with a fresh In-App Purchase key (apple-sim knows its
    /// public part); `serverAPI` gives the issuer id the JWS kinds need.
    static func withOffers(
        serverAPI: Bool = true, offerKey: Bool = true, environment: [String: String] = [:], _ body: (PipelineHarness) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("offers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let products = directory.appendingPathComponent("products.json")
        try PipelineHarness.catalogJSON.write(to: products, atomically: true, encoding: .utf8)
        let key = P256.Signing.PrivateKey()
        let keyFile = directory.appendingPathComponent("SubscriptionKey_\(keyID).p8")
        try key.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        var settings = ["IAP_PRODUCTS_FILE": products.path]
        if offerKey {
            settings["IAP_OFFER_KEY_ID"] = keyID
            settings["IAP_OFFER_PRIVATE_KEY_FILE"] = keyFile.path
        }
        settings.merge(environment) { _, new in new }
        try await withPipeline(serverAPI: serverAPI, environment: settings) { pipeline in
            pipeline.simulator.offers.register(keyID: keyID, publicKey: key.publicKey)
            try await body(pipeline)
        }
    }

    static func ask(_ pipeline: PipelineHarness, _ body: [String: Any], headers: [(String, String)] = []) async throws -> PipelineHarness.Reply {
        try await pipeline.post(raw: try JSONSerialization.data(withJSONObject: body), path: "/v1/offers/signatures", headers: headers)
    }

    static func code(_ reply: PipelineHarness.Reply) -> String? { (reply.json["error"] as? [String: Any])?["code"] as? String }

    /// What the app hands StoreKit, checked by apple-sim over HTTP: `valid` and the claims, or the reason.
    static func storeKitCheck(_ pipeline: PipelineHarness, _ fields: [String: Any]) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: pipeline.simulatorServer.baseURL + "/control/offers/check")
        request.method = .POST
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: fields)))
        let response = try await pipeline.http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        return try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
    }

    /// The answer of a signing request, handed to StoreKit as an app would.
    static func storeKitTakes(_ pipeline: PipelineHarness, _ answer: [String: Any]) async throws -> [String: Any] {
        var fields: [String: Any] = [
            "kind": answer["kind"] as Any, "bundle_id": answer["bundle_id"] as Any, "product_id": answer["product_id"] as Any,
        ]
        for name in ["offer_id", "key_id", "nonce", "timestamp", "signature", "app_account_token", "jws"] {
            if let value = answer[name] { fields[name] = value }
        }
        return try await storeKitCheck(pipeline, fields)
    }

    static func expire(_ pipeline: PipelineHarness, _ original: String) async throws {
        let signed = try pipeline.simulator.serverAPI.signedNotification(type: "EXPIRED", subtype: "VOLUNTARY", transactionID: original)
        let reply = try await pipeline.notify(signed)
        #expect(try await pipeline.terminal(try #require(reply.json["ticket"] as? String)).result == "applied")
    }

    @Test func eachKindIsSignedForWhomTheCatalogAllowsAndStoreKitTakesIt() async throws {
        try await Self.withOffers { pipeline in
            let token = "7E3FB20B-4CDB-47CC-936D-99D65F608138"
            #expect(try await pipeline.bind(token: token, to: "newcomer").status == 200)
            let product = ["product_id": "vip.monthly"]
            func ask(_ user: String, _ kind: String, _ more: [String: Any] = [:]) async throws -> PipelineHarness.Reply {
                try await Self.ask(pipeline, ["user_id": user, "kind": kind].merging(product) { $1 }.merging(more) { $1 })
            }

            // Never had the group: any and new offers, and the introductory offer.
            let v1 = try await ask("newcomer", "promotional", ["offer_id": "anyone"])
            #expect(v1.status == 200, "\(v1.json)")
            #expect(v1.json["key_id"] as? String == Self.keyID && v1.json["app_account_token"] as? String == token.lowercased())
            #expect(v1.json["bundle_id"] as? String == PipelineHarness.bundleID && v1.json["offer_id"] as? String == "anyone")
            #expect(try await Self.storeKitTakes(pipeline, v1.json)["valid"] as? Bool == true)
            // StoreKit refuses the same signature for another offer, or for a purchase without the token.
            var forged = v1.json
            forged["offer_id"] = "welcome"
            #expect(try await Self.storeKitTakes(pipeline, forged)["reason"] as? String == "signature does not verify")
            forged = v1.json
            forged["app_account_token"] = ""
            #expect(try await Self.storeKitTakes(pipeline, forged)["valid"] as? Bool == false)

            let welcome = try await ask("newcomer", "promotional_v2", ["offer_id": "welcome", "transaction_id": "2000000000000001"])
            #expect(welcome.status == 200, "\(welcome.json)")
            var checked = try await Self.storeKitTakes(pipeline, welcome.json)
            #expect(checked["valid"] as? Bool == true, "\(checked)")
            #expect(checked["offerIdentifier"] as? String == "welcome" && checked["transactionId"] as? String == "2000000000000001")
            #expect(checked["iss"] as? String == pipeline.configuration.serverAPI.key?.issuerID)
            let lapsedOnly = try await ask("newcomer", "promotional", ["offer_id": "winback"])
            #expect(lapsedOnly.status == 403 && Self.code(lapsedOnly) == "not_eligible")

            let intro = try await ask("newcomer", "introductory_eligibility", ["transaction_id": "2000000000000001"])
            #expect(intro.status == 200 && intro.json["allow_introductory_offer"] as? Bool == true)
            checked = try await Self.storeKitTakes(pipeline, intro.json)
            #expect(checked["valid"] as? Bool == true && checked["allowIntroductoryOffer"] as? Bool == true, "\(checked)")

            // Subscribed now (player-1): neither new nor lapsed, no introductory offer; `any` still.
            try await EntitlementEndToEndTests.subscribe(pipeline, "7300000000000001")
            for offer in ["welcome", "winback"] {
                let refused = try await ask("player-1", "promotional_v2", ["offer_id": offer])
                #expect(refused.status == 403 && Self.code(refused) == "not_eligible", "\(offer): \(refused.json)")
            }
            #expect(try await ask("player-1", "promotional", ["offer_id": "anyone"]).status == 200)
            // An Apple Account named in a request must be one the user is seated on.
            let notSeated = try await ask("player-1", "introductory_eligibility", ["app_transaction_id": "705000000000001"])
            #expect(notSeated.status == 400 && Self.code(notSeated) == "app_transaction_id_not_seated", "\(notSeated.json)")
            _ = try await pipeline.store.seatAppleAccount("705000000000001", user: "player-1", limit: nil)
            let noIntro = try await ask("player-1", "introductory_eligibility", ["app_transaction_id": "705000000000001"])
            #expect(noIntro.status == 200 && noIntro.json["allow_introductory_offer"] as? Bool == false)
            checked = try await Self.storeKitTakes(pipeline, noIntro.json)
            #expect(checked["valid"] as? Bool == true && checked["allowIntroductoryOffer"] as? Bool == false)
            #expect(checked["transactionId"] as? String == "705000000000001")
            // Another product of the group counts as the group: no introductory offer on vip.yearly either.
            let yearly = try await Self.ask(pipeline, [
                "user_id": "player-1", "product_id": "vip.yearly", "kind": "introductory_eligibility", "transaction_id": "1",
            ])
            #expect(yearly.json["allow_introductory_offer"] as? Bool == false)

            // Lapsed: the win-back offer, and still never `new`.
            try await Self.expire(pipeline, "7300000000000001")
            let winback = try await ask("player-1", "promotional_v2", ["offer_id": "winback"])
            #expect(winback.status == 200)
            let winbackChecked = try await Self.storeKitTakes(pipeline, winback.json)
            #expect(winbackChecked["valid"] as? Bool == true)
            #expect(Self.code(try await ask("player-1", "promotional", ["offer_id": "welcome"])) == "not_eligible")

            // Off player-1's Apple Account, the newcomer is new; naming that account is refused.
            #expect(try await ask("newcomer", "promotional", ["offer_id": "welcome"]).status == 200)
            #expect(Self.code(try await ask("newcomer", "promotional", ["offer_id": "welcome", "app_transaction_id": "705000000000001"]))
                == "app_transaction_id_not_seated")
            // Seated on it, a new user of the game is not new to the group, whether the request names
            // the account or not; the eligibility JWS names the seated account when no id is given.
            _ = try await pipeline.store.seatAppleAccount("705000000000001", user: "newcomer", limit: nil)
            let sameAccount = try await ask("newcomer", "introductory_eligibility")
            #expect(sameAccount.status == 200 && sameAccount.json["allow_introductory_offer"] as? Bool == false, "\(sameAccount.json)")
            #expect(try await Self.storeKitTakes(pipeline, sameAccount.json)["transactionId"] as? String == "705000000000001")
            #expect(Self.code(try await ask("newcomer", "promotional", ["offer_id": "welcome"])) == "not_eligible")
            #expect(Self.code(try await ask("newcomer", "promotional", ["offer_id": "welcome", "app_transaction_id": "705000000000001"])) == "not_eligible")

            // Every signature issued is in the user's log, counted: the newcomer's five, the newest first.
            let log = try await pipeline.store.offerSignatures(of: "newcomer")
            #expect(log.count == 5, "\(log)")
            #expect(log.recent.first?["kind"] == "introductory_eligibility" && log.recent.last?["kind"] == "promotional", "\(log.recent)")
            #expect(log.recent.last?["nonce"] == v1.json["nonce"] as? String && log.recent.last?["offer_id"] == "anyone")
            #expect(try await pipeline.store.offerSignatures(of: "nobody").count == 0)
        }
    }

    @Test func whatCannotBeSignedIsRefusedWithItsCode() async throws {
        try await Self.withOffers { pipeline in
            let base: [String: Any] = ["user_id": "player-1", "product_id": "vip.monthly", "kind": "promotional", "offer_id": "anyone"]
            let cases: [([String: Any], Int, String)] = [
                (base.filter { $0.key != "user_id" }, 400, "missing_field"),
                (base.filter { $0.key != "kind" }, 400, "missing_field"),
                (base.merging(["kind": "win_back"]) { $1 }, 400, "invalid_kind"),
                (base.merging(["user_id": 7]) { $1 }, 400, "wrong_type"),
                (base.merging(["user_id": ""]) { $1 }, 400, "invalid_user_id"),
                (base.filter { $0.key != "offer_id" }, 400, "missing_field"),
                (base.merging(["offer_id": "spring"]) { $1 }, 400, "offer_not_found"),
                (base.merging(["product_id": "gold.100"]) { $1 }, 400, "offer_not_found"),
                (base.merging(["product_id": "no.such"]) { $1 }, 400, "offer_not_found"),
                (base.merging(["bundle_id": "com.other.app"]) { $1 }, 400, "unknown_bundle_id"),
                (["user_id": "player-1", "product_id": "vip.monthly", "kind": "introductory_eligibility"], 400, "missing_field"),
            ]
            for (body, status, code) in cases {
                let reply = try await Self.ask(pipeline, body)
                #expect(reply.status == status && Self.code(reply) == code, "\(body): \(reply.status) \(reply.json)")
            }
            let junk = try await pipeline.post(raw: Data("{".utf8), path: "/v1/offers/signatures")
            #expect(junk.status == 400 && Self.code(junk) == "malformed_json")
            // The named app is the one signed for.
            let named = try await Self.ask(pipeline, base.merging(["bundle_id": PipelineHarness.bundleID]) { $1 })
            #expect(named.status == 200 && named.json["bundle_id"] as? String == PipelineHarness.bundleID)
        }
    }

    @Test func withoutAKeyOrAnIssuerNothingIsSigned() async throws {
        try await Self.withOffers(offerKey: false) { pipeline in
            let reply = try await Self.ask(pipeline, ["user_id": "u", "product_id": "vip.monthly", "kind": "promotional", "offer_id": "anyone"])
            #expect(reply.status == 503 && Self.code(reply) == "offers_not_configured")
        }
        // No issuer id (no Server API key): the v1 signature only.
        try await Self.withOffers(serverAPI: false) { pipeline in
            let v1 = try await Self.ask(pipeline, ["user_id": "u", "product_id": "vip.monthly", "kind": "promotional", "offer_id": "anyone"])
            #expect(v1.status == 200 && v1.json["app_account_token"] as? String == "")
            #expect(try await Self.storeKitTakes(pipeline, v1.json)["valid"] as? Bool == true)
            let v2 = try await Self.ask(pipeline, ["user_id": "u", "product_id": "vip.monthly", "kind": "promotional_v2", "offer_id": "anyone"])
            #expect(v2.status == 503 && Self.code(v2) == "offers_not_configured")
        }
    }

    /// Each app of `IAP_APPS_FILE` signs with its own `offer_key` (else the single key) and its
    /// team's issuer id; the single key's two settings come together.
    @Test func eachAppSignsWithItsOwnKeyAndIssuer() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("offer-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func keyFile(_ name: String) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try P256.Signing.PrivateKey().pemRepresentation.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let apps = directory.appendingPathComponent("apps.json").path
        try #"""
            {"com.acme.one": {"offer_key": {"key_id": "ONEKEY", "private_key_file": "\#(try keyFile("one.p8"))"},
                              "server_api": {"key_id": "A", "issuer_id": "issuer-one", "private_key_file": "\#(try keyFile("api.p8"))"}},
             "com.acme.two": {}}
            """#.write(toFile: apps, atomically: true, encoding: .utf8)
        let configuration = try PipelineConfiguration(environment: [
            "IAP_APPS_FILE": apps, "IAP_OFFER_KEY_ID": "SHARED", "IAP_OFFER_PRIVATE_KEY_FILE": try keyFile("shared.p8"),
        ])
        let signers = try configuration.offerSigners()
        #expect(signers["com.acme.one"]?.keyID == "ONEKEY" && signers["com.acme.one"]?.issuerID == "issuer-one")
        #expect(signers["com.acme.two"]?.keyID == "SHARED" && signers["com.acme.two"]?.issuerID == nil)
        #expect(signers["com.acme.two"]?.bundleID == "com.acme.two")
        #expect {
            try PipelineConfiguration(environment: ["IAP_OFFER_KEY_ID": "K"])
        } throws: { error in
            (error as? ConfigurationError)?.variable == "IAP_OFFER_PRIVATE_KEY_FILE"
        }
        #expect {
            try PipelineConfiguration(environment: ["IAP_OFFER_KEY_ID": "K", "IAP_OFFER_PRIVATE_KEY_FILE": "/nonexistent.p8", "IAP_BUNDLE_IDS": "a.b"])
                .offerSigners()
        } throws: { error in
            (error as? ConfigurationError)?.problem.contains("cannot read") == true
        }
    }

    /// A backend's bare key may sign offers; a key scoped `support` alone may not.
    @Test func offersTakeTheOffersScope() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("client-keys-\(UUID().uuidString).json")
        try #"{"backend-1": "0123456789abcdef-backend-secret", "desk": {"secret": "support-desk-secret-0123456789", "scopes": ["support"]}}"#
            .write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await Self.withOffers(environment: ["IAP_CLIENT_KEYS_FILE": file.path]) { pipeline in
            let body = try JSONSerialization.data(withJSONObject: [
                "user_id": "u", "product_id": "vip.monthly", "kind": "promotional", "offer_id": "anyone",
            ])
            func signed(_ id: String, _ secret: String) -> [(String, String)] {
                RequestSigner(keyID: id, secret: secret).headers(
                    method: "POST", target: "/v1/offers/signatures", body: body, timestamp: Int64(Date().timeIntervalSince1970))
            }
            let backend = try await pipeline.post(raw: body, path: "/v1/offers/signatures", headers: signed("backend-1", "0123456789abcdef-backend-secret"))
            #expect(backend.status == 200, "\(backend.json)")
            let desk = try await pipeline.post(raw: body, path: "/v1/offers/signatures", headers: signed("desk", "support-desk-secret-0123456789"))
            #expect(desk.status == 403 && Self.code(desk) == "forbidden_scope")
            let unsigned = try await pipeline.post(raw: body, path: "/v1/offers/signatures")
            #expect(unsigned.status == 401)
        }
    }
}
