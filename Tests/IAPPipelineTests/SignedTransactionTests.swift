import AppleJWS
import AppleSimulator
import Foundation
import IAPStages
import PipelineTestSupport
import Testing

/// StoreKit 2 signed transactions through the same intake, dedupe and grant path as receipts.
@Suite(.serialized) struct SignedTransactionTests {
    @Test func aSignedTransactionIsGrantedOnceAndItsEnvironmentRecorded() async throws {
        try await withPipeline { pipeline in
            let jws = try pipeline.authority.signer.sign(payload: SignedFixture.transaction("2000000000000001", environment: "Sandbox"))
            let id = try await pipeline.submit(signed: jws)
            let ticket = try await pipeline.terminal(id)
            #expect(ticket.status == .granted && ticket.environment == "Sandbox")
            #expect(ticket.transactions.map(\.transactionID) == ["2000000000000001"])
            let fulfilments = try await pipeline.fulfilments()
            #expect(fulfilments.count == 1 && fulfilments.first?["transaction_id"] == "2000000000000001")
            // The same JWS from the same user: the same ticket, nothing queued.
            let again = try await pipeline.post(["signed_transaction": jws, "user_id": "player-1"])
            #expect(again.status == 200 && again.json["ticket"] as? String == id && again.json["status"] as? String == "granted")
        }
    }

    /// Apple's `appTransactionId` (the Apple Account that bought it) reaches the grant record and
    /// the fulfilment entry; a purchase without one has neither field.
    @Test func theAppleAccountThatBoughtItIsOnTheGrantRecordAndTheEvent() async throws {
        try await withPipeline { pipeline in
            var bought = SignedFixture.transaction("2000000000000011")
            bought.appTransactionID = "704289572311234567"
            let id = try await pipeline.submit(signed: try pipeline.authority.signer.sign(payload: bought))
            #expect(try await pipeline.terminal(id).status == .granted)
            let older = try await pipeline.submit(signed: try pipeline.authority.signer.sign(payload: SignedFixture.transaction("2000000000000012")))
            #expect(try await pipeline.terminal(older).status == .granted)
            let keys = pipeline.configuration.keys
            let record = try await pipeline.redis.send("HGETALL", keys.grant(unit: "2000000000000011", originalTransactionID: "2000000000000011")).stringDictionary
            #expect(record["app_transaction_id"] == "704289572311234567")
            let without = try await pipeline.redis.send("HGETALL", keys.grant(unit: "2000000000000012", originalTransactionID: "2000000000000012")).stringDictionary
            #expect(without["user_id"] == "player-1" && without["app_transaction_id"] == nil)
            let events = Dictionary(uniqueKeysWithValues: try await pipeline.fulfilments().map { ($0["transaction_id"] ?? "", $0) })
            #expect(events["2000000000000011"]?["app_transaction_id"] == "704289572311234567")
            #expect(events["2000000000000012"]?["app_transaction_id"] == nil)
        }
    }

    @Test func aPurchaseSeenAsReceiptThenAsSignedTransactionIsGrantedOnce() async throws {
        try await withPipeline { pipeline in
            let first = try await pipeline.terminal(try await pipeline.submit(receipt([gold("2000000000000002")])))
            #expect(first.status == .granted)
            let jws = try pipeline.authority.signer.sign(payload: SignedFixture.transaction("2000000000000002"))
            let second = try await pipeline.terminal(try await pipeline.submit(signed: jws))
            #expect(second.status == .duplicate && second.transactions.map(\.outcome) == [.duplicate])
            #expect(try await pipeline.fulfilments().count == 1)
        }
    }

    @Test func forgedOrAlteredSignedDataIsRejectedWithInvalidSignature() async throws {
        try await withPipeline { pipeline in
            let attacker = try SigningAuthority()
            let forged = try attacker.signer.sign(payload: SignedFixture.transaction("2000000000000003"))
            let genuine = try pipeline.authority.signer.sign(payload: SignedFixture.transaction("2000000000000004"))
            let richer = try pipeline.authority.signer.sign(payload: SignedFixture.transaction("2000000000000004", product: "level.pack"))
            let parts = genuine.split(separator: ".")
            let altered = [parts[0], richer.split(separator: ".")[1], parts[2]].joined(separator: ".")
            for (jws, cause) in [(forged, "chain not trusted"), (altered, "signature does not verify")] {
                let ticket = try await pipeline.terminal(try await pipeline.submit(signed: jws))
                #expect(ticket.status == .rejected && ticket.reason == "invalid_signature")
                #expect(ticket.lastError?.contains(cause) == true, "\(ticket.lastError ?? "no last_error")")
                #expect(ticket.lastError?.contains(String(parts[2])) == false)
            }
            #expect(try await pipeline.fulfilments().isEmpty)
        }
    }

    @Test func anotherAppsTransactionIsABundleMismatchAndARevokedOneIsRefused() async throws {
        try await withPipeline { pipeline in
            let other = try pipeline.authority.signer.sign(payload: SignedFixture.transaction("2000000000000005", bundleID: "com.other.app"))
            let mismatch = try await pipeline.terminal(try await pipeline.submit(signed: other))
            #expect(mismatch.status == .rejected && mismatch.reason == "bundle_mismatch")
            let revoked = try pipeline.authority.signer.sign(payload: SignedFixture.transaction("2000000000000006", revoked: true))
            let refunded = try await pipeline.terminal(try await pipeline.submit(signed: revoked))
            #expect(refunded.status == .rejected && refunded.transactions.first?.reason == "refunded")
            #expect(try await pipeline.fulfilments().isEmpty)
        }
    }
}
