import Crypto
import Foundation
import IAPClient
import IAPStages
import Testing

/// docs/signing-vectors.json, the one set of signing cases that this suite, the Swift client and
/// examples/python/iap_pipeline.py all check: the intake's check (`RequestSigner.isValid`, which
/// `RequestAuthenticator` calls), the webhook stage's signer and a receiver's `WebhookVerifier`.
struct SigningVectorsTests {
    static let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/signing-vectors.json")

    static func section(_ path: String...) throws -> [[String: Any]] {
        var node: Any = try JSONSerialization.jsonObject(with: Data(contentsOf: file))
        for key in path { node = try #require((node as? [String: Any])?[key]) }
        return try #require(node as? [[String: Any]])
    }

    static func text(_ vector: [String: Any], _ key: String) throws -> String {
        try #require(vector[key] as? String, "\(vector["name"] ?? "?") has no \(key)")
    }

    @Test func eachSignedRequestIsSignedSoAndTheIntakeAcceptsIt() throws {
        let vectors = try Self.section("requests", "signed")
        #expect(vectors.count >= 5)
        for vector in vectors {
            let signer = RequestSigner(keyID: try Self.text(vector, "key_id"), secret: try Self.text(vector, "secret"))
            let body = Array(try Self.text(vector, "body").utf8)
            let (method, target, timestamp) = (try Self.text(vector, "method"), try Self.text(vector, "target"), try Self.text(vector, "timestamp"))
            let headers = signer.headers(method: method, target: target, body: body, timestamp: try #require(Int64(timestamp)))
            #expect(headers.first { $0.0 == "X-IAP-Signature" }?.1 == (try Self.text(vector, "signature")), "\(vector["name"]!)")
            #expect(signer.isValid(signature: try Self.text(vector, "signature"), method: method, target: target, body: body, timestamp: timestamp))
        }
    }

    @Test func eachRefusedRequestIsRefusedByTheIntakesCheck() throws {
        let vectors = try Self.section("requests", "refused")
        #expect(vectors.count >= 5)
        for vector in vectors {
            let key = SymmetricKey(data: Array(try Self.text(vector, "secret").utf8))
            let valid = RequestSigner.isValid(
                signature: try Self.text(vector, "signature"), method: try Self.text(vector, "method"), target: try Self.text(vector, "target"),
                body: Array(try Self.text(vector, "body").utf8), timestamp: try Self.text(vector, "timestamp"), key: key)
            #expect(!valid, "\(vector["name"]!)")
        }
    }

    @Test func theWebhookStageSignsEachDeliveryAsTheVectorsSay() throws {
        for vector in try Self.section("webhooks", "signed") {
            let signer = WebhookSigner(secret: try Self.text(vector, "secret"), previousSecret: vector["previous_secret"] as? String)
            let timestamp = try #require(vector["timestamp"] as? Int)
            #expect(signer.signature(body: Array(try Self.text(vector, "body").utf8), timestamp: Int64(timestamp)) == (try Self.text(vector, "header")),
                "\(vector["name"]!)")
        }
    }

    @Test func aReceiverAcceptsExactlyTheValidDeliveries() throws {
        let vectors = try Self.section("webhooks", "checked")
        #expect(vectors.contains { $0["valid"] as? Bool == true } && vectors.contains { $0["valid"] as? Bool == false })
        for vector in vectors {
            let verifier = WebhookVerifier(secrets: try #require(vector["secrets"] as? [String]), tolerance: .seconds(300))
            let valid = verifier.isValid(
                header: try Self.text(vector, "header"), body: Array(try Self.text(vector, "body").utf8),
                nowSeconds: Int64(try #require(vector["now"] as? Int)))
            #expect(valid == (vector["valid"] as? Bool), "\(vector["name"]!)")
        }
        // No header at all is a refusal too, never an error.
        #expect(!WebhookVerifier(secret: "a-secret-0123456789").isValid(header: nil, body: [UInt8]()))
    }
}
