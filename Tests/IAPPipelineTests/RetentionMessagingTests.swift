import AppleJWS
import AppleSimulator
@preconcurrency import Crypto
import AsyncHTTPClient
import Foundation
import IAPOperations
import IAPStages
import NIOCore
import PipelineCore
import PipelineTestSupport
import Testing

/// `POST /v1/apple/retention`, Apple's Get Retention Message endpoint, played by apple-sim: each
/// subscriber gets what the first rule that matches their books names (a signed promotional
/// offer, a message, a switch plan), every answer is a `retention_offered` event once, and a
/// forged, replayed or stale request gets nothing and records nothing.
@Suite(.serialized) struct RetentionMessagingTests {
    static let loyalMessage = "0f6bd64c-3b1e-4d4e-9d3f-5a1e2b7c9d01"
    static let refundMessage = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    static let yearlyMessage = "9e8d7c6b-5a4f-4e3d-2c1b-0a9f8e7d6c5b"

    /// The harness's catalog with three retention rules.
    static var catalogJSON: String {
        let catalog = PipelineHarness.catalogJSON.trimmingCharacters(in: .whitespacesAndNewlines)
        return String(catalog.dropLast()) + #"""
            , "retention": [
              {"name": "loyal_comeback", "when": {"tenure_months": {"at_least": 6}, "refunds": {"below": 1}, "product": ["vip.monthly"]},
               "promotional_offer": "anyone", "message": "\#(loyalMessage)"},
              {"name": "refunders", "when": {"refunds": {"at_least": 1}}, "message": "\#(refundMessage)"},
              {"name": "try_yearly", "when": {"product": ["vip.monthly"], "tenure_months": {"below": 6}},
               "alternate_product": "vip.yearly", "message": "\#(yearlyMessage)"}
            ]}
            """#
    }

    static func withRetention(_ body: (PipelineHarness) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("retention-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let products = directory.appendingPathComponent("products.json")
        try catalogJSON.write(to: products, atomically: true, encoding: .utf8)
        let key = P256.Signing.PrivateKey()
        let keyFile = directory.appendingPathComponent("SubscriptionKey_OFFERKEY01.p8")
        try key.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        let settings = [
            "IAP_PRODUCTS_FILE": products.path, "IAP_OFFER_KEY_ID": "OFFERKEY01", "IAP_OFFER_PRIVATE_KEY_FILE": keyFile.path,
            // The setup's calls one after another in the sandbox (a tenth of this a second).
            "IAP_APPLE_API_MAX_RPS": "1000",
        ]
        try await withPipeline(serverAPI: true, environment: settings) { pipeline in
            pipeline.simulator.offers.register(keyID: "OFFERKEY01", publicKey: key.publicKey)
            try await body(pipeline)
        }
    }

    static let monthMs: Int64 = 30 * 86_400_000

    /// A sandbox vip.monthly subscription whose first period was bought `monthsAgo` months ago.
    static func subscribe(_ pipeline: PipelineHarness, _ id: String, user: String, monthsAgo: Int64) async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let subscription = JWSTransaction(
            transactionID: id, webOrderLineItemID: "w\(id)", bundleID: PipelineHarness.bundleID, productID: "vip.monthly",
            purchaseDate: now - monthsAgo * monthMs - 1000, expiresDate: now + 3_600_000, type: "Auto-Renewable Subscription",
            signedDate: now - 1000, environment: "Sandbox")
        let jws = try pipeline.simulator.serverAPI.register(subscription)
        #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws, user: user)).status == .granted)
    }

    /// A sandbox consumable bought and refunded by Apple.
    static func refundedPurchase(_ pipeline: PipelineHarness, _ id: String, user: String) async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let gold = JWSTransaction(
            transactionID: id, bundleID: PipelineHarness.bundleID, productID: "gold.100", purchaseDate: now - 1000, type: "Consumable",
            signedDate: now - 1000, environment: "Sandbox")
        let jws = try pipeline.simulator.serverAPI.register(gold)
        #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws, user: user)).status == .granted)
        let refund = try pipeline.simulator.serverAPI.signedNotification(type: "REFUND", transactionID: id)
        let reply = try await pipeline.notify(refund)
        #expect(try await pipeline.terminal(try #require(reply.json["ticket"] as? String)).result == "revoked")
    }

    /// apple-sim's real-time request for `original`, sent to the intake: what it got.
    static func ask(
        _ pipeline: PipelineHarness, _ original: String, product: String = "vip.monthly", signedDate: Int64? = nil
    ) async throws -> [String: Any] {
        var order: [String: Any] = [
            "original_transaction_id": original, "product_id": product, "app_apple_id": 1_234_567_890, "environment": "Sandbox",
            "url": pipeline.intake.baseURL + "/v1/apple/retention",
        ]
        if let signedDate { order["signed_date"] = signedDate }
        var request = HTTPClientRequest(url: pipeline.simulatorServer.baseURL + "/control/retention-requests")
        request.method = .POST
        request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: order)))
        let response = try await pipeline.http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        return try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
    }

    static func retentionEvents(_ pipeline: PipelineHarness) async throws -> [[String: String]] {
        try await pipeline.fulfilments().filter { $0["event"] == "retention_offered" }
    }

    @Test func eachSubscriberGetsTheAnswerOfTheFirstRuleTheirBooksMatchAndOnlyOnce() async throws {
        try await Self.withRetention { pipeline in
            try await Self.subscribe(pipeline, "7400000000000001", user: "loyal", monthsAgo: 8)
            try await Self.refundedPurchase(pipeline, "7400000000000090", user: "refunder")
            try await Self.subscribe(pipeline, "7400000000000002", user: "refunder", monthsAgo: 8)
            try await Self.subscribe(pipeline, "7400000000000003", user: "newcomer", monthsAgo: 0)

            // Eight months, no refund: the promotional offer, signed V2 for the subscription.
            let loyal = try await Self.ask(pipeline, "7400000000000001")
            #expect(loyal["status"] as? Int == 200, "\(loyal)")
            let offer = try #require((loyal["body"] as? [String: Any])?["promotionalOffer"] as? [String: Any], "\(loyal)")
            #expect(offer["messageIdentifier"] as? String == Self.loyalMessage)
            let jws = try #require(offer["promotionalOfferSignatureV2"] as? String)
            let checked = try await OfferSignatureTests.storeKitCheck(pipeline, [
                "kind": "promotional_v2", "bundle_id": PipelineHarness.bundleID, "product_id": "vip.monthly", "offer_id": "anyone",
                "jws": jws,
            ])
            #expect(checked["valid"] as? Bool == true, "\(checked)")
            #expect(checked["transactionId"] as? String == "7400000000000001" && checked["offerIdentifier"] as? String == "anyone")

            // A refund on the books: the message alone, though tenure is as long.
            let refunder = try await Self.ask(pipeline, "7400000000000002")
            #expect((refunder["body"] as? [String: Any])?.keys.sorted() == ["message"], "\(refunder)")
            #expect(((refunder["body"] as? [String: Any])?["message"] as? [String: Any])?["messageIdentifier"] as? String == Self.refundMessage)

            // New: a switch to the yearly plan of the same group.
            let newcomer = try await Self.ask(pipeline, "7400000000000003")
            let alternate = try #require((newcomer["body"] as? [String: Any])?["alternateProduct"] as? [String: Any], "\(newcomer)")
            #expect(alternate["productId"] as? String == "vip.yearly" && alternate["messageIdentifier"] as? String == Self.yearlyMessage)

            // A subscription not on the books: Apple's default (an empty answer), recorded for nobody.
            let unknown = try await Self.ask(pipeline, "7400000000000099")
            #expect(unknown["status"] as? Int == 200 && (unknown["body"] as? [String: Any])?.isEmpty == true, "\(unknown)")

            let events = try await Self.retentionEvents(pipeline)
            #expect(events.map { "\($0["user_id"]!) \($0["retention_rule"]!) \($0["retention_kind"]!)" } == [
                "loyal loyal_comeback promotional_offer", "refunder refunders message", "newcomer try_yearly alternate_product", " none default",
            ])
            #expect(events[0]["offer_identifier"] == "anyone" && events[0]["original_transaction_id"] == "7400000000000001")
            #expect(events[2]["alternate_product"] == "vip.yearly" && events[0]["bundle_id"] == PipelineHarness.bundleID)
            let record = try await pipeline.store.subscriptionRecord(originalTransactionID: "7400000000000001")
            #expect(record["retention_rule"] == "loyal_comeback" && record["retention_offer"] == "anyone")
            #expect(record["retention_message"] == Self.loyalMessage)
            let day = FigureDay(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
            let figures = try await pipeline.redis.send("HGETALL", pipeline.configuration.keys.figures(day: day)).stringDictionary
            for rule in ["loyal_comeback", "refunders", "try_yearly", "none"] {
                #expect(figures.first { $0.key.hasPrefix("retention_offered:\(rule)|Sandbox|") }?.value == "1", "\(rule): \(figures)")
            }

            // The same request again: refused, nothing more recorded.
            let replayed = try await pipeline.post(
                raw: try JSONSerialization.data(withJSONObject: ["signedPayload": try #require(loyal["signedPayload"] as? String)]),
                path: "/v1/apple/retention")
            #expect(replayed.status == 409 && OfferSignatureTests.code(replayed) == "replayed_request", "\(replayed.json)")
            #expect(try await Self.retentionEvents(pipeline).count == 4)

            // The loyal subscriber takes the offer: the next period, a retention offer's, is saved
            // by the rule; the period after it is a plain renewal.
            for (id, offer) in [("7400000000000011", 5), ("7400000000000012", nil)] as [(String, Int?)] {
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                var period = JWSTransaction(
                    transactionID: id, originalTransactionID: "7400000000000001", webOrderLineItemID: "w\(id)",
                    bundleID: PipelineHarness.bundleID, productID: "vip.monthly", purchaseDate: now, expiresDate: now + Self.monthMs,
                    type: "Auto-Renewable Subscription", signedDate: now, environment: "Sandbox")
                period.offerType = offer
                let jws = try pipeline.simulator.serverAPI.register(period)
                #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "loyal")).status == .granted)
            }
            let renewals = try await pipeline.fulfilments().filter { $0["event"] == "renewed" }
            #expect(renewals.map { "\($0["transaction_id"]!) \($0["offer_type"] ?? "-") \($0["retention_rule"] ?? "-")" } == [
                "7400000000000011 5 loyal_comeback", "7400000000000012 - -",
            ])
            let after = try await pipeline.redis.send("HGETALL", pipeline.configuration.keys.figures(day: day)).stringDictionary
            #expect(after.filter { $0.key.hasPrefix("retention_saved:") }.map { "\($0.key.prefix { $0 != "|" }) \($0.value)" }
                == ["retention_saved:loyal_comeback 1"], "\(after)")
        }
    }

    @Test func aForgedOrStaleRequestGetsNothingAndNothingIsRecorded() async throws {
        try await Self.withRetention { pipeline in
            try await Self.subscribe(pipeline, "7410000000000001", user: "loyal", monthsAgo: 8)
            // Signed by a chain that does not end at our root.
            let forger = try SigningAuthority()
            let forged = try forger.signer.sign(payload: RealtimeRequest(
                originalTransactionID: "7410000000000001", appAppleID: 1, productID: "vip.monthly", userLocale: "en-US",
                requestIdentifier: UUID().uuidString, signedDate: Int64(Date().timeIntervalSince1970 * 1000), environment: "Sandbox"))
            let refused = try await pipeline.post(
                raw: try JSONSerialization.data(withJSONObject: ["signedPayload": forged]), path: "/v1/apple/retention")
            #expect(refused.status == 401 && OfferSignatureTests.code(refused) == "invalid_signature", "\(refused.json)")
            // Apple's own signature, ten minutes old: too old to take.
            let stale = try await Self.ask(pipeline, "7410000000000001", signedDate: Int64(Date().timeIntervalSince1970 * 1000) - 600_000)
            #expect(stale["status"] as? Int == 400 && ((stale["body"] as? [String: Any])?["error"] as? [String: Any])?["code"] as? String
                == "stale_request", "\(stale)")
            // Not a JWS at all.
            let garbage = try await pipeline.post(
                raw: try JSONSerialization.data(withJSONObject: ["signedPayload": "not-a-jws"]), path: "/v1/apple/retention")
            #expect(garbage.status == 400 && OfferSignatureTests.code(garbage) == "invalid_jws")
            #expect(try await Self.retentionEvents(pipeline).isEmpty)
            let stored = try await pipeline.storedKeys()
            #expect(!stored.contains { $0.contains("retention-request") }, "\(stored)")
            // A production request for a sandbox subscription: refused too.
            let wrongEnvironment = try await pipeline.post(
                raw: try JSONSerialization.data(withJSONObject: [
                    "signedPayload": try pipeline.simulator.serverAPI.signedRealtimeRequest(
                        originalTransactionID: "7410000000000001", productID: "vip.monthly", appAppleID: 1, environment: "Production"),
                ]),
                path: "/v1/apple/retention")
            #expect(wrongEnvironment.status == 400 && OfferSignatureTests.code(wrongEnvironment) == "environment_mismatch")
            #expect(try await Self.retentionEvents(pipeline).isEmpty)
        }
    }

    /// `iapctl apple retention`'s calls against apple-sim's Retention Messaging API: the sandbox
    /// URL, a message, a default message, then Apple's performance test runs against the intake and
    /// passes; production takes its URL only after that.
    @Test func theSetupReachesAppleAndThePerformanceTestPassesAgainstTheIntake() async throws {
        try await Self.withRetention { pipeline in
            try await Self.subscribe(pipeline, "7420000000000001", user: "loyal", monthsAgo: 8)
            let setup = RetentionSetup(client: try #require(pipeline.lookupClient))
            let url = pipeline.intake.baseURL + "/v1/apple/retention"
            guard case .failure(let early) = RetentionSetup.outcome(await setup.client.setRealtimeURL(url, environment: .production)) else {
                Issue.record("production took a URL before any performance test passed")
                return
            }
            #expect(early.refused && early.message.contains("4030020"), "\(early)")
            #expect(try RetentionSetup.outcome(await setup.client.setRealtimeURL(url, environment: .sandbox)).get() == .object([:]))
            #expect(try RetentionSetup.outcome(await setup.client.realtimeURL(environment: .sandbox)).get()["realtimeURL"]?.string == url)
            let uploaded = await setup.client.uploadMessage(
                Self.loyalMessage, header: "Stay a while", body: "Half price for three months.", image: nil, environment: .sandbox)
            #expect(try RetentionSetup.outcome(uploaded).get() == .object([:]))
            let again = await setup.client.uploadMessage(Self.loyalMessage, header: "x", body: "y", image: nil, environment: .sandbox)
            #expect((try? RetentionSetup.outcome(again).get()) == nil)
            let list = try RetentionSetup.outcome(await setup.client.messageList(environment: .sandbox)).get()
            #expect(list["messageIdentifiers"]?.array?.compactMap { $0["messageIdentifier"]?.string } == [Self.loyalMessage])
            let setDefault = await setup.client.configureDefaultMessage(
                productID: "vip.monthly", locale: "en-US", messageID: Self.loyalMessage, environment: .sandbox)
            #expect(try RetentionSetup.outcome(setDefault).get() == .object([:]))
            #expect(pipeline.simulator.serverAPI.defaultMessage(product: "vip.monthly", locale: "en-US", environment: "Sandbox") == Self.loyalMessage)

            // A small test, with a threshold no loaded machine misses: what is checked is that every
            // request was answered and recorded, not how fast.
            var request = HTTPClientRequest(url: pipeline.simulatorServer.baseURL + "/control/retention-performance")
            request.method = .POST
            request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: [
                "total_requests": 40, "max_concurrent_requests": 8, "response_time_threshold": 60_000,
            ])))
            #expect(try await pipeline.http.execute(request, timeout: .seconds(10)).status == .ok)
            let result = try await setup.performanceTest(originalTransactionID: "7420000000000001", wait: .seconds(120), poll: .milliseconds(50)).get()
            #expect(result["result"]?.string == "PASS" && result["successRate"]?.int == 100 && result["numPending"]?.int == 0, "\(result)")
            #expect(result["target"]?.string == url && result["responseTimes"]?["p99"]?.int != nil)
            let events = try await Self.retentionEvents(pipeline)
            #expect(events.count == 40 && events.allSatisfy { $0["retention_rule"] == "loyal_comeback" && $0["user_id"] == "loyal" })
            #expect(Set(events.compactMap { $0["request_id"] }).count == 40)
            #expect(try RetentionSetup.outcome(await setup.client.setRealtimeURL(url, environment: .production)).get() == .object([:]))
        }
    }
}
