import AppStoreServerAPI
import AppleJWS
import AppleSimulator
import Foundation
import IAPSettings
import Logging
import PipelineCore
import IAPStages
import PipelineTestSupport
import Testing

/// Apple's CONSUMPTION_REQUEST: answered with Send Consumption Information v2 when the operator
/// set a refund preference and the user consented; never sent without consent; retried like every
/// Apple call.
@Suite(.serialized) struct ConsumptionRequestTests {
    static let answering = ["IAP_REFUND_PREFERENCE": "decline"]

    /// A signed purchase granted to player-1 (sandbox, as NotificationTests' are).
    static func granted(_ pipeline: PipelineHarness, _ id: String) async throws {
        let jws = try pipeline.simulator.serverAPI.register(SignedFixture.consumable(id))
        #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws)).status == .granted)
    }

    static func consent(_ pipeline: PipelineHarness, _ user: String, _ consented: Bool) async throws {
        let reply = try await pipeline.post(
            raw: try JSONSerialization.data(withJSONObject: ["consented": consented]), path: "/v1/users/\(user)/consent", method: .PUT)
        #expect(reply.status == 200)
        #expect(reply.json["user_id"] as? String == user && reply.json["consented"] as? Bool == consented)
    }

    static func consumptionRequest(_ pipeline: PipelineHarness, _ id: String) async throws -> Ticket {
        let signed = try pipeline.simulator.serverAPI.signedNotification(type: "CONSUMPTION_REQUEST", transactionID: id)
        let reply = try await pipeline.notify(signed)
        #expect(reply.status == 200)
        return try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
    }

    @Test func aConsentingUsersPurchaseIsReportedDeliveredWithTheOperatorsPreference() async throws {
        try await withPipeline(serverAPI: true, environment: Self.answering) { pipeline in
            try await Self.granted(pipeline, "6000000000000001")
            try await Self.consent(pipeline, "player-1", true)
            let ticket = try await Self.consumptionRequest(pipeline, "6000000000000001")
            #expect(ticket.status == .applied && ticket.result == "consumption_sent")
            let reports = pipeline.simulator.serverAPI.consumptionReports(transactionID: "6000000000000001")
            #expect(reports == [[
                "customerConsented": "true", "deliveryStatus": "DELIVERED", "refundPreference": "DECLINE",
                "sampleContentProvided": "false",
            ]])
            // Refunded since: a new request says it is no longer delivered.
            let refund = try pipeline.simulator.serverAPI.signedNotification(type: "REFUND", transactionID: "6000000000000001")
            #expect(try await pipeline.terminal(try #require(try await pipeline.notify(refund).json["ticket"] as? String)).result == "revoked")
            #expect(try await Self.consumptionRequest(pipeline, "6000000000000001").result == "consumption_sent")
            #expect(pipeline.simulator.serverAPI.consumptionReports(transactionID: "6000000000000001").last?["deliveryStatus"] == "UNDELIVERED_OTHER")
        }
    }

    @Test func withoutConsentNothingIsSent() async throws {
        try await withPipeline(serverAPI: true, environment: Self.answering) { pipeline in
            try await Self.granted(pipeline, "6000000000000002")
            #expect(try await Self.consumptionRequest(pipeline, "6000000000000002").result == "consumption_not_consented")
            // Withdrawn consent counts as none.
            try await Self.consent(pipeline, "player-1", false)
            #expect(try await Self.consumptionRequest(pipeline, "6000000000000002").result == "consumption_not_consented")
            // A purchase nobody was granted has nobody who could have consented.
            _ = try pipeline.simulator.serverAPI.register(SignedFixture.consumable("6000000000000003"))
            try await Self.consent(pipeline, "player-1", true)
            #expect(try await Self.consumptionRequest(pipeline, "6000000000000003").result == "consumption_not_consented")
            #expect(pipeline.simulator.serverAPI.consumptionReports(transactionID: "6000000000000002").isEmpty)
            #expect(pipeline.simulator.serverAPI.consumptionReports(transactionID: "6000000000000003").isEmpty)
        }
    }

    @Test func anAnswerAppleCannotTakeIsRetried() async throws {
        // Apple's faults go to whichever call comes next: no Finish Transaction errand may take them.
        try await withPipeline(serverAPI: true, environment: Self.answering.merging(["IAP_FINISH_TRANSACTIONS": "off"]) { $1 }) { pipeline in
            try await Self.granted(pipeline, "6000000000000004")
            try await Self.consent(pipeline, "player-1", true)
            pipeline.simulator.serverAPI.setFaults(SimulatedAPIFaults(serverErrors: 2))
            let ticket = try await Self.consumptionRequest(pipeline, "6000000000000004")
            #expect(ticket.result == "consumption_sent" && ticket.attempts == 1)
            #expect(pipeline.simulator.serverAPI.consumptionReports(transactionID: "6000000000000004").count == 1)
            #expect(pipeline.simulator.serverAPI.callCounts()["Sandbox consumption"] == 3)
        }
    }

    /// `IAP_REFUND_PREFERENCE` unset (`none`): the request is kept with the purchase's history, unanswered.
    @Test func withoutARefundPreferenceTheRequestIsOnlyRecorded() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            try await Self.granted(pipeline, "6000000000000005")
            try await Self.consent(pipeline, "player-1", true)
            #expect(try await Self.consumptionRequest(pipeline, "6000000000000005").result == "recorded")
            #expect(pipeline.simulator.serverAPI.consumptionReports(transactionID: "6000000000000005").isEmpty)
        }
    }

    @Test func theConsentEndpointRefusesBadInputPrecisely() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let cases: [(String, String, String)] = [
                ("/v1/users/player-1/consent", #"{"consented": "yes"}"#, "wrong_type"),
                ("/v1/users/player-1/consent", #"{"consented": 1}"#, "wrong_type"),
                ("/v1/users/player-1/consent", #"{}"#, "missing_field"),
                ("/v1/users/player-1/consent", #"[true]"#, "malformed_json"),
                ("/v1/users/player-1/consent", #"{"consented": tru"#, "malformed_json"),
                ("/v1/users/\(String(repeating: "x", count: 129))/consent", #"{"consented": true}"#, "invalid_user_id"),
            ]
            for (path, body, code) in cases {
                let reply = try await pipeline.post(raw: Data(body.utf8), path: path, method: .PUT)
                #expect(reply.status == 400, "\(body)")
                #expect((reply.json["error"] as? [String: Any])?["code"] as? String == code, "\(body)")
            }
            #expect(try await pipeline.redis.send("EXISTS", pipeline.configuration.keys.consent(user: "player-1")).int == 0)
        }
    }

    static func record(_ pipeline: PipelineHarness, _ id: String, _ body: String, user: String = "player-1") async throws -> PipelineHarness.Reply {
        try await pipeline.post(raw: Data(body.utf8), path: "/v1/users/\(user)/purchases/\(id)/consumption", method: .PUT)
    }

    /// 5,000 gems bought, all spent, and a refund asked for: Apple hears DELIVERED with 100 %
    /// consumption (the game's word) and the preference of the request's reason.
    @Test func aSpentConsumableIsReportedDeliveredAndFullyConsumedWithTheReasonsPreference() async throws {
        try await withPipeline(serverAPI: true, environment: ["IAP_REFUND_PREFERENCE": "UNINTENDED_PURCHASE=grant_full,default=decline"]) { pipeline in
            try await Self.granted(pipeline, "6000000000000010")
            try await Self.consent(pipeline, "player-1", true)
            let recorded = try await Self.record(pipeline, "6000000000000010", #"{"delivery_status": "DELIVERED", "consumption_percentage": 100000}"#)
            #expect(recorded.status == 200 && recorded.json["consumption_percentage"] as? Int == 100_000, "\(recorded.json)")
            let api = pipeline.simulator.serverAPI
            func ask(_ reason: String) async throws -> Ticket {
                let signed = try api.signedNotification(
                    type: "CONSUMPTION_REQUEST", transactionID: "6000000000000010", consumptionRequestReason: reason)
                return try await pipeline.terminal(try #require(try await pipeline.notify(signed).json["ticket"] as? String))
            }
            #expect(try await ask("UNINTENDED_PURCHASE").result == "consumption_sent")
            #expect(api.consumptionReports(transactionID: "6000000000000010").last == [
                "customerConsented": "true", "deliveryStatus": "DELIVERED", "consumptionPercentage": "100000",
                "refundPreference": "GRANT_FULL", "sampleContentProvided": "false",
            ])
            #expect(try await ask("UNSATISFIED_WITH_PURCHASE").result == "consumption_sent")
            #expect(api.consumptionReports(transactionID: "6000000000000010").last?["refundPreference"] == "DECLINE")
            // The game says the servers were down: that is what Apple hears, with no consumption.
            #expect(try await Self.record(pipeline, "6000000000000010", #"{"delivery_status": "UNDELIVERED_SERVER_OUTAGE", "consumption_percentage": 0}"#).status == 200)
            #expect(try await ask("FULFILLMENT_ISSUE").result == "consumption_sent")
            let last = try #require(api.consumptionReports(transactionID: "6000000000000010").last)
            #expect(last["deliveryStatus"] == "UNDELIVERED_SERVER_OUTAGE" && last["consumptionPercentage"] == "0")
            #expect(api.consumptionReports(transactionID: "6000000000000010").count == 3)
        }
    }

    /// Apple's rules for the facts: no consumption for an auto-renewable subscription, 0 unless
    /// delivered, and a prorated refund only with some consumption (else the preference is left out).
    @Test func theAnswerKeepsApplesRulesForConsumption() {
        typealias Facts = PipelineStore.ConsumptionFacts
        let spent = Facts(user: "u", delivered: true, consented: true, recorded: .init(deliveryStatus: .delivered, percentage: 40_000))
        var sent = NotifyHandler.consumptionInformation(spent, autoRenewable: false, preference: .grantProrated)
        #expect(sent.deliveryStatus == .delivered && sent.consumptionPercentage == 40_000 && sent.refundPreference == .grantProrated)
        sent = NotifyHandler.consumptionInformation(spent, autoRenewable: true, preference: .grantProrated)
        #expect(sent.consumptionPercentage == nil && sent.refundPreference == .grantProrated)
        let untouched = Facts(user: "u", delivered: true, consented: true, recorded: nil)
        sent = NotifyHandler.consumptionInformation(untouched, autoRenewable: false, preference: .grantProrated)
        #expect(sent.deliveryStatus == .delivered && sent.consumptionPercentage == nil && sent.refundPreference == nil)
        let revoked = Facts(user: "u", delivered: false, consented: true, recorded: nil)
        #expect(NotifyHandler.consumptionInformation(revoked, autoRenewable: false, preference: .decline).deliveryStatus == .undeliveredOther)
    }

    @Test func theConsumptionEndpointRefusesBadInputPrecisely() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let cases: [(String, String)] = [
                (#"{}"#, "missing_field"),
                (#"{"delivery_status": 1}"#, "wrong_type"),
                (#"{"delivery_status": "SHIPPED"}"#, "invalid_delivery_status"),
                (#"{"delivery_status": "DELIVERED", "consumption_percentage": "all"}"#, "wrong_type"),
                (#"{"delivery_status": "DELIVERED", "consumption_percentage": 100001}"#, "invalid_consumption_percentage"),
                (#"{"delivery_status": "DELIVERED", "consumption_percentage": 50.5}"#, "invalid_consumption_percentage"),
                (#"{"delivery_status": "UNDELIVERED_OTHER", "consumption_percentage": 10}"#, "invalid_consumption_percentage"),
                (#"[1]"#, "malformed_json"),
            ]
            for (body, code) in cases {
                let reply = try await Self.record(pipeline, "6000000000000011", body)
                #expect(reply.status == 400 && (reply.json["error"] as? [String: Any])?["code"] as? String == code, "\(body): \(reply.json)")
            }
            #expect(try await pipeline.redis.send("EXISTS", pipeline.configuration.keys.consumption(user: "player-1")).int == 0)
            let long = try await Self.record(pipeline, String(repeating: "9", count: 129), #"{"delivery_status": "DELIVERED"}"#)
            #expect((long.json["error"] as? [String: Any])?["code"] as? String == "invalid_transaction_id")
        }
    }

    /// The catalog's rules answer before `IAP_REFUND_PREFERENCE`: a purchase in Japan by its
    /// storefront rule, one elsewhere by the setting. Each answer records its rule (the grant
    /// record, the request's event), and Apple's outcome is counted by it in the refunds report.
    @Test func aRequestIsAnsweredByItsStorefrontsRuleAndTheOutcomeCountedByRule() async throws {
        var catalog = try #require(try JSONSerialization.jsonObject(with: Data(PipelineHarness.catalogJSON.utf8)) as? [String: Any])
        catalog["refund_preference"] = [
            ["name": "repeat_refunder", "when": ["refunds_before": ["at_least": 3]], "preference": "decline"],
            ["name": "spender", "when": ["lifetime_spend": ["currency": "USD", "at_least": 9_980]], "preference": "grant_full"],
            ["name": "japan", "when": ["storefront": ["JPN"], "delivered": true], "preference": "grant_full"],
        ]
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("products-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: catalog).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let settings = Self.answering.merging(["IAP_PRODUCTS_FILE": file.path]) { $1 }
        try await withPipeline(serverAPI: true, environment: settings) { pipeline in
            let api = pipeline.simulator.serverAPI
            var japanese = SignedFixture.consumable("6000000000000031")
            japanese.storefront = "JPN"
            var french = SignedFixture.consumable("6000000000000032")
            french.storefront = "FRA"
            for transaction in [japanese, french] {
                #expect(try await pipeline.terminal(try await pipeline.submit(signed: try api.register(transaction))).status == .granted)
            }
            try await Self.consent(pipeline, "player-1", true)
            #expect(try await Self.consumptionRequest(pipeline, "6000000000000031").result == "consumption_sent")
            #expect(try await Self.consumptionRequest(pipeline, "6000000000000032").result == "consumption_sent")
            #expect(api.consumptionReports(transactionID: "6000000000000031").last?["refundPreference"] == "GRANT_FULL")
            #expect(api.consumptionReports(transactionID: "6000000000000032").last?["refundPreference"] == "DECLINE")
            let record = try await pipeline.redis.send(
                "HGETALL", pipeline.configuration.keys.grant(unit: "6000000000000031", originalTransactionID: "6000000000000031")
            ).stringDictionary
            #expect(record["refund_rule"] == "japan")
            let requests = try await pipeline.fulfilments().filter { $0["event"] == "refund_answered" }
            #expect(Set(requests.compactMap { $0["refund_rule"] }) == ["japan", "IAP_REFUND_PREFERENCE"])

            // Apple refunds the one and declines the other: each outcome by the rule that answered.
            let refund = try api.signedNotification(type: "REFUND", transactionID: "6000000000000031")
            #expect(try await pipeline.terminal(try #require(try await pipeline.notify(refund).json["ticket"] as? String)).result == "revoked")
            let declined = try api.signedNotification(type: "REFUND_DECLINED", transactionID: "6000000000000032")
            _ = try await pipeline.terminal(try #require(try await pipeline.notify(declined).json["ticket"] as? String))
            #expect(try await pipeline.fulfilments().contains { $0["event"] == "revoked" && $0["refund_rule"] == "japan" })
            let rows = try await BusinessReportTests.report(pipeline, "refunds", by: "product")
            let gold = rows.first { $0["product_id"] as? String == "gold.100" }
            // Rules without the setting would answer nothing: the notifier refuses to start, naming both.
            var unset = pipeline.configuration
            unset.errands.refundPreference = nil
            #expect {
                try StageAssembly(configuration: unset, store: pipeline.store, logger: Logger(label: "test")).handler(for: .notify)
            } throws: { error in
                (error as? ConfigurationError)?.variable == "IAP_REFUND_PREFERENCE" && "\(error)".contains("repeat_refunder")
            }
            #expect(BusinessReportTests.figures(gold, [
                "answered_by_rule_japan", "answered_by_rule_IAP_REFUND_PREFERENCE", "refunded_by_rule_japan",
                "declined_by_rule_IAP_REFUND_PREFERENCE",
            ]) == [1, 1, 1, 1], "\(rows)")

            // Two purchases at 4.99 by another player: the second request is answered by what they spent.
            for id in ["6000000000000041", "6000000000000042"] {
                var sold = SignedFixture.sold(id, currency: "USD")
                sold.purchaseDate = Int64(Date().timeIntervalSince1970 * 1000)
                sold.environment = "Sandbox"
                sold.storefront = "FRA"
                #expect(try await pipeline.terminal(try await pipeline.submit(signed: try api.register(sold), user: "spender-1")).status == .granted)
            }
            try await Self.consent(pipeline, "spender-1", true)
            #expect(try await Self.consumptionRequest(pipeline, "6000000000000042").result == "consumption_sent")
            #expect(api.consumptionReports(transactionID: "6000000000000042").last?["refundPreference"] == "GRANT_FULL")
            #expect(try await pipeline.fulfilments().contains { $0["event"] == "refund_answered" && $0["refund_rule"] == "spender" })
        }
    }
}
