import AppleJWS
import AppleSimulator
import ArgumentParser
import Foundation
import IAPOperations
import PipelineTestSupport
import TestSupport
import Testing

@testable import IAPControlCLI

/// Renewal-date extensions: the raid servers were down, subscribers get their days back; the
/// subscription's `expires_at` moves when Apple confirms, and the backend hears `renewal_extended`.
@Suite(.serialized) struct RenewalExtensionTests {
    static let day: Int64 = 86_400_000

    static func extensions(_ pipeline: PipelineHarness) throws -> RenewalExtensions {
        RenewalExtensions(
            store: pipeline.store, clients: pipeline.appClients.map(\.client),
            signedData: SignedDataVerifier(rootCertificates: try pipeline.configuration.rootCertificates()),
            ticketTTL: pipeline.configuration.ticketTTL)
    }

    static func expiresAt(_ pipeline: PipelineHarness, _ original: String) async throws -> Int64? {
        try await pipeline.redis.send("HGET", pipeline.configuration.keys.subscription(originalTransactionID: original), "expires_at")
            .string.flatMap { Int64($0) }
    }

    @Test func anExtensionMovesTheSubscriptionAndReachesTheBackend() async throws {
        // More calls a second than the sandbox's default budget (a tenth of 50).
        try await withPipeline(serverAPI: true, environment: ["IAP_APPLE_API_MAX_RPS": "1000"]) { pipeline in
            try await EntitlementEndToEndTests.subscribe(pipeline, "7400000000000001")
            let before = try #require(try await Self.expiresAt(pipeline, "7400000000000001"))
            let extensions = try Self.extensions(pipeline)
            let first = await extensions.extend(
                originalTransactionID: "7400000000000001", days: 30, reason: 3, requestIdentifier: "outage-1", logger: testLogger)
            guard case .success(let extended) = first else { Issue.record("not extended: \(first)"); return }
            #expect(extended.effectiveDate == before + 30 * Self.day && extended.environment == "Sandbox")
            let ticket = try await pipeline.terminal(try #require(extended.ticket))
            #expect(ticket.status == .applied && ticket.result == "applied", "\(ticket)")
            #expect(try await Self.expiresAt(pipeline, "7400000000000001") == before + 30 * Self.day)
            let events = try await pipeline.fulfilments().filter { $0["event"] == "renewal_extended" }
            #expect(events.count == 1 && events.first?["user_id"] == "player-1", "\(events)")
            #expect(events.first?["expires_at"] == String(before + 30 * Self.day))
            // Apple's own RENEWAL_EXTENDED arriving after changes nothing more.
            let api = pipeline.simulator.serverAPI
            let told = api.sentNotifications().filter { $0.type == "RENEWAL_EXTENDED" }
            #expect(told.count == 1)
            let delivered = try await pipeline.notify(try #require(api.signedPayload(uuid: told[0].uuid)))
            _ = try await pipeline.terminal(try #require(delivered.json["ticket"] as? String))
            #expect(try await Self.expiresAt(pipeline, "7400000000000001") == before + 30 * Self.day)

            // The same request again is the same extension; a second is allowed, a third refused with Apple's code.
            guard case .success(let again) = await extensions.extend(
                originalTransactionID: "7400000000000001", days: 30, reason: 3, requestIdentifier: "outage-1", logger: testLogger)
            else { Issue.record("the same request again failed"); return }
            #expect(again.effectiveDate == before + 30 * Self.day && api.extensionCount(originalTransactionID: "7400000000000001") == 1)
            guard case .success = await extensions.extend(
                originalTransactionID: "7400000000000001", days: 5, reason: 1, requestIdentifier: "outage-2", logger: testLogger)
            else { Issue.record("a second extension failed"); return }
            let third = await extensions.extend(
                originalTransactionID: "7400000000000001", days: 5, reason: 1, requestIdentifier: "outage-3", logger: testLogger)
            #expect(third.failure?.code == "apple_api_error_4030005", "\(third)")
            let tooLong = await extensions.extend(
                originalTransactionID: "7400000000000001", days: 91, reason: 1, requestIdentifier: "outage-4", logger: testLogger)
            #expect(tooLong.failure?.code == "apple_api_error_4000009", "\(tooLong)")
            // Expired at Apple: not eligible. Unknown: not found.
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try api.register(JWSTransaction(
                transactionID: "7400000000000009", webOrderLineItemID: "w9", bundleID: PipelineHarness.bundleID, productID: "vip.monthly",
                purchaseDate: now - 40 * Self.day, expiresDate: now - 10 * Self.day, type: "Auto-Renewable Subscription", environment: "Sandbox"))
            let expired = await extensions.extend(
                originalTransactionID: "7400000000000009", days: 5, reason: 3, requestIdentifier: "x", logger: testLogger)
            #expect(expired.failure?.code == "apple_api_error_4030004", "\(expired)")
            let unknown = await extensions.extend(
                originalTransactionID: "7499999999999999", days: 5, reason: 3, requestIdentifier: "x", logger: testLogger)
            #expect(unknown.failure?.code == "subscription_not_found", "\(unknown)")
        }
    }

    @Test func everyActiveSubscriberOfAProductIsExtendedAndToldSo() async throws {
        // More calls a second than the sandbox's default budget (a tenth of 50).
        try await withPipeline(serverAPI: true, environment: ["IAP_APPLE_API_MAX_RPS": "1000"]) { pipeline in
            try await EntitlementEndToEndTests.subscribe(pipeline, "7400000000000011", user: "player-1")
            try await EntitlementEndToEndTests.subscribe(pipeline, "7400000000000012", user: "player-2")
            let before = [
                "7400000000000011": try #require(try await Self.expiresAt(pipeline, "7400000000000011")),
                "7400000000000012": try #require(try await Self.expiresAt(pipeline, "7400000000000012")),
            ]
            let extensions = try Self.extensions(pipeline)
            let started = await extensions.extendAll(
                productID: "vip.monthly", storefronts: nil, days: 10, reason: 3, requestIdentifier: "raid-down", environment: .sandbox)
            #expect(try started.get() == "raid-down")
            let status = try await extensions.status(productID: "vip.monthly", requestIdentifier: "raid-down", environment: .sandbox).get()
            #expect(status.complete && status.succeededCount == 2 && status.failedCount == 0)
            // Apple tells each subscriber; the intake applies what it is told.
            let api = pipeline.simulator.serverAPI
            let told = api.sentNotifications().filter { $0.type == "RENEWAL_EXTENDED" || $0.type == "RENEWAL_EXTENSION" }
            #expect(told.map(\.type).sorted() == ["RENEWAL_EXTENDED", "RENEWAL_EXTENDED", "RENEWAL_EXTENSION"])
            for notification in told {
                let reply = try await pipeline.notify(try #require(api.signedPayload(uuid: notification.uuid)))
                #expect(reply.status == 200)
                _ = try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
            }
            for (original, expires) in before {
                #expect(try await Self.expiresAt(pipeline, original) == expires + 10 * Self.day, "\(original)")
            }
            let events = try await pipeline.fulfilments().filter { $0["event"] == "renewal_extended" }
            #expect(Set(events.compactMap { $0["user_id"] }) == ["player-1", "player-2"])
            let unknown = await extensions.status(productID: "vip.monthly", requestIdentifier: "nope", environment: .sandbox)
            #expect(unknown.failure?.code.hasPrefix("apple_api_error_") == true)
        }
    }

    @Test func theCommandRefusesWhatAppleWould() throws {
        for arguments in [
            ["--days", "5", "--reason", "1"],
            ["--original-transaction-id", "1", "--all", "--product", "p", "--days", "5", "--reason", "1"],
            ["--original-transaction-id", "1", "--days", "91", "--reason", "1"],
            ["--original-transaction-id", "1", "--days", "5", "--reason", "4"],
            ["--all", "--days", "5", "--reason", "1"],
            ["--all", "--product", "p", "--storefronts", "US,FRA", "--days", "5", "--reason", "1"],
            ["--status", "--product", "p"],
        ] {
            #expect(throws: (any Error).self, "\(arguments)") { try AppleCommand.Extend.parse(arguments) }
        }
        _ = try AppleCommand.Extend.parse(["--all", "--product", "p", "--storefronts", "usa,FRA", "--days", "90", "--reason", "3", "--wait", "30"])
        _ = try AppleCommand.Extend.parse(["--status", "--product", "p", "--request-id", "r"])
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
