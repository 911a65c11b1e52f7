import AppleJWS
import Foundation
import IAPClient
import IAPOperations
import PipelineTestSupport
import Testing

/// The Swift client (`IAPClient.PipelineClient`) against the whole pipeline over real HTTP, signed
/// with a key of `IAP_CLIENT_KEYS_FILE`: every evidence kind, waiting, the user routes, an offer,
/// and the intake's refusals as typed errors.
@Suite(.serialized) struct PipelineClientTests {
    static let signer = RequestSigner(keyID: "backend-1", secret: "0123456789abcdef-backend-secret")

    /// The offers' pipeline (catalog, In-App Purchase key, Server API), its intake checking `signer`.
    func withSignedPipeline(_ body: (PipelineHarness, PipelineClient) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("client-keys-\(UUID().uuidString).json")
        try Self.signer.keysFile.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await OfferSignatureTests.withOffers(environment: ["IAP_CLIENT_KEYS_FILE": file.path]) { pipeline in
            try await body(pipeline, PipelineClient(baseURL: pipeline.intake.baseURL + "/", signer: Self.signer))
        }
    }

    @Test func everyEvidenceKindIsSubmittedAndSettledOnce() async throws {
        try await withSignedPipeline { pipeline, client in
            let receipt = receipt([gold("2000000000000801")]).receiptData()
            let first = try await client.submit(.receipt(receipt), for: "player 7")
            #expect(first.isNew && first.status == .queued)
            let granted = try await client.settled(first.ticket)
            #expect(granted.status == .granted && granted.transactions.map(\.transactionID) == ["2000000000000801"], "\(granted)")
            #expect(granted.transactions.first?.outcome == "granted" && granted.id == first.ticket)
            // The same evidence again: the same ticket, nothing queued.
            let again = try await client.submit(.receipt(receipt), for: "player 7")
            #expect(!again.isNew && again.ticket == first.ticket && again.status == .granted)

            let signed = try pipeline.authority.signer.sign(payload: SignedFixture.transaction("2000000000000802", product: "level.pack"))
            #expect(try await client.settled(try await client.submit(.signedTransaction(signed), for: "player 7").ticket).status == .granted)

            _ = try pipeline.simulator.serverAPI.register(SignedFixture.transaction("2000000000000803"))
            #expect(try await client.settled(try await client.submit(.transactionID("2000000000000803"), for: "player 7").ticket).status == .granted)

            let app = try pipeline.authority.signer.sign(payload: SignedFixture.appTransaction())
            let bound = try await client.settled(try await client.submit(.signedAppTransaction(app), for: "player 7").ticket)
            #expect(bound.status == .applied && bound.result == "apple_account_bound", "\(bound)")

            // The user's books, through a percent-encoded id signed as sent.
            let entitlements = try await client.entitlements(of: "player 7")
            #expect(entitlements.map(\.entitlement) == ["level_pack"] && entitlements.first?.status == "active")
            let record = try await client.user("player 7", limit: 2)
            #expect(record["purchases"]?.array?.count == 2 && record["next_before"]?.string != nil, "\(record)")
            #expect(try await pipeline.store.appleAccountUsers(SignedFixture.appleAccount) == ["player 7"])
            #expect(try await client.entitlements(of: "nobody").isEmpty)
        }
    }

    @Test func theUserRoutesAndAnOfferAnswerAndRefusalsAreTyped() async throws {
        try await withSignedPipeline { pipeline, client in
            let receipt = receipt([gold("2000000000000811")]).receiptData()
            _ = try await client.settled(try await client.submit(.receipt(receipt), for: "p1").ticket)
            try await client.setConsent(true, for: "p1")
            try await client.setConsumption(.delivered, percentage: 100_000, transactionID: "2000000000000811", for: "p1")
            try await client.setAppAccountToken(UUID(uuidString: "5a1f3c1e-2222-4c2b-9a55-1b2c3d4e5f60")!, for: "p1")
            let record = try await client.user("p1")
            #expect(record["consent"]?.bool == true && record["app_account_token"]?.string == "5a1f3c1e-2222-4c2b-9a55-1b2c3d4e5f60", "\(record)")
            let spend = try await client.spend(of: "p1", since: "2026-01-01")
            #expect(spend["user_id"]?.string == "p1")

            let offer = try await client.offerSignature(kind: "promotional", for: "p1", productID: "vip.monthly", offerID: "anyone")
            #expect(offer["signature"]?.string?.isEmpty == false && offer["key_id"]?.string == OfferSignatureTests.keyID, "\(offer)")

            let app = try pipeline.authority.signer.sign(payload: SignedFixture.appTransaction())
            let sync = try await client.sync("p1", signedAppTransaction: app)
            let synced = try await client.settled(sync.ticket)
            #expect(sync.isNew && synced.status == .applied, "\(synced)")

            // Refusals: the intake's status and code, not retried.
            let malformed = await #expect(throws: PipelineClientError.self) {
                try await client.submit(.signedTransaction("not-a-jws"), for: "p1")
            }
            #expect(malformed?.status == 400 && malformed?.code == "invalid_jws")
            let refused = await #expect(throws: PipelineClientError.self) {
                try await client.offerSignature(kind: "promotional", for: "p1", productID: "gold.100", offerID: "nope")
            }
            #expect(refused?.code == "offer_not_found" && refused?.status == 400 && refused?.isRetryable == false)
            let stranger = PipelineClient(
                baseURL: pipeline.intake.baseURL, signer: RequestSigner(keyID: "backend-1", secret: "another-secret-0123456789"))
            let unsigned = await #expect(throws: PipelineClientError.self) { try await stranger.entitlements(of: "p1") }
            #expect(unsigned?.status == 401 && unsigned?.code == "bad_signature")
            #expect(PipelineClientError(status: 503, code: "redis_unavailable", message: "").isRetryable)
            #expect(!PipelineClientError(status: 503, code: "offers_not_configured", message: "").isRetryable)

            let erased = try await client.erase("p1")
            #expect(erased["pseudonym"]?.string?.hasPrefix("erased:") == true)
        }
    }
}
