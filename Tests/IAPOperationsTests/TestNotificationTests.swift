import AppStoreServerAPI
import AppleJWS
import Foundation
@testable import IAPOperations
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// `iapctl apple test-notification`'s probe against apple-sim's Request a Test Notification and
/// Get Test Notification Status, with the intake as the app's notification URL.
@Suite struct TestNotificationTests {
    @Test func aTestNotificationRoundTripsThroughTheIntakeAndIsApplied() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let api = pipeline.simulator.serverAPI
            api.setNotificationURL(pipeline.intake.baseURL + "/v1/notifications/apple", environment: "Sandbox")
            let probe = try Self.probe(pipeline)
            let outcome = try await probe.run(environment: .sandbox, wait: .seconds(20), poll: .milliseconds(50))
            #expect(outcome.result == "stored" && outcome.arrived)
            #expect(outcome.attempts.map(\.sendAttemptResult) == ["SUCCESS"])
            let ticket = try #require(outcome.ticket)
            #expect(try await pipeline.terminal(ticket).status == .applied)
            // Nothing was sent to production: Apple names the notification, reports no attempt.
            let production = try await probe.run(environment: .production, wait: .milliseconds(200), poll: .milliseconds(50))
            #expect(production.result == "no_attempt" && production.notificationUUID != nil && production.ticket == nil)
        }
    }

    @Test func aTestNotificationTheIntakeRefusesIsReportedFailed() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            // A wrong URL: the intake answers 404, as a deploy with a broken route would.
            pipeline.simulator.serverAPI.setNotificationURL(pipeline.intake.baseURL + "/v1/notifications/wrong", environment: "Sandbox")
            let outcome = try await Self.probe(pipeline).run(environment: .sandbox, wait: .seconds(20), poll: .milliseconds(50))
            #expect(outcome.result == "failed" && !outcome.arrived)
            #expect(outcome.attempts.map(\.sendAttemptResult) == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE"])
            #expect(outcome.ticket == nil)
        }
    }

    static func probe(_ pipeline: PipelineHarness) throws -> TestNotificationProbe {
        TestNotificationProbe(
            client: try #require(pipeline.lookupClient),
            signedData: SignedDataVerifier(rootCertificates: try pipeline.configuration.rootCertificates()), store: pipeline.store)
    }
}
