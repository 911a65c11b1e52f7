import AppStoreServerAPI
import AppleJWS
import AppleSimulator
import Foundation
import IAPPipeline
import PipelineTestSupport
import Testing

/// Apple's CONSUMPTION_REQUEST: answered with Send Consumption Information v2 when the operator
/// set a refund preference and the user consented; never sent without consent; retried like every
/// Apple call.
@Suite(.serialized) struct ConsumptionRequestTests {
    static let answering = ["IAP_REFUND_PREFERENCE": "decline"]

    /// A signed purchase granted to player-1 (sandbox, as NotificationTests' are).
    static func granted(_ pipeline: PipelineHarness, _ id: String) async throws {
        let jws = try pipeline.simulator.serverAPI.register(NotificationTests.transaction(id))
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
            _ = try pipeline.simulator.serverAPI.register(NotificationTests.transaction("6000000000000003"))
            try await Self.consent(pipeline, "player-1", true)
            #expect(try await Self.consumptionRequest(pipeline, "6000000000000003").result == "consumption_not_consented")
            #expect(pipeline.simulator.serverAPI.consumptionReports(transactionID: "6000000000000002").isEmpty)
            #expect(pipeline.simulator.serverAPI.consumptionReports(transactionID: "6000000000000003").isEmpty)
        }
    }

    @Test func anAnswerAppleCannotTakeIsRetried() async throws {
        try await withPipeline(serverAPI: true, environment: Self.answering) { pipeline in
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
}
