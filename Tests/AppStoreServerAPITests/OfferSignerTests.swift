import AppleJWS
import AppStoreServerAPI
@preconcurrency import Crypto
import Foundation
import Testing

/// Each offer signature checked with the key's public part, field by field, as StoreKit checks it.
@Suite struct OfferSignerTests {
    static let key = P256.Signing.PrivateKey()
    static let signer = OfferSigner(keyID: "OFFERKEY01", issuerID: "57246542-96fe-1a63-e053-0824d011072a", bundleID: "com.example.game", privateKey: key)

    @Test func aPromotionalV1SignatureVerifiesOverApplesSevenFields() throws {
        let nonce = UUID()
        let token = "7E3FB20B-4CDB-47CC-936D-99D65F608138"
        let signed = try Self.signer.promotional(
            productID: "vip.monthly", offerID: "winback", applicationUsername: token, nonce: nonce, timestamp: 1_764_000_000_123)
        #expect(signed.keyID == "OFFERKEY01" && signed.timestamp == 1_764_000_000_123)
        #expect(signed.nonce == nonce.uuidString.lowercased())
        // What StoreKit rebuilds: the fields joined by U+2063, the token and nonce lower-cased.
        let message = "com.example.game\u{2063}OFFERKEY01\u{2063}vip.monthly\u{2063}winback\u{2063}"
            + "7e3fb20b-4cdb-47cc-936d-99d65f608138\u{2063}\(nonce.uuidString.lowercased())\u{2063}1764000000123"
        let der = try #require(Data(base64Encoded: signed.signature))
        let signature = try P256.Signing.ECDSASignature(derRepresentation: der)
        #expect(Self.key.publicKey.isValidSignature(signature, for: Data(message.utf8)))
        // Any other field breaks it.
        #expect(!Self.key.publicKey.isValidSignature(signature, for: Data(message.replacingOccurrences(of: "winback", with: "welcome").utf8)))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: Data(message.utf8)))
    }

    static func decode(_ jws: String) throws -> (header: [String: Any], claims: [String: Any], valid: Bool) {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let segments = try parts.map { try #require(Base64URL.decode($0)) }
        let header = try #require(try JSONSerialization.jsonObject(with: Data(segments[0])) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(segments[1])) as? [String: Any])
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: segments[2])
        return (header, claims, key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
    }

    @Test func aPromotionalV2SignatureIsAJWSWithApplesClaims() throws {
        let nonce = UUID()
        let jws = try Self.signer.promotionalV2(
            productID: "vip.monthly", offerID: "welcome", transactionID: "2000000000000001", nonce: nonce, issuedAt: 1_764_000_000)
        let (header, claims, valid) = try Self.decode(jws)
        #expect(valid)
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "OFFERKEY01" && header["typ"] as? String == "JWT")
        #expect(claims["iss"] as? String == "57246542-96fe-1a63-e053-0824d011072a")
        #expect((claims["iat"] as? NSNumber)?.int64Value == 1_764_000_000 && claims["exp"] == nil)
        #expect(claims["aud"] as? String == "promotional-offer" && claims["bid"] as? String == "com.example.game")
        #expect(claims["nonce"] as? String == nonce.uuidString.lowercased())
        #expect(claims["productId"] as? String == "vip.monthly" && claims["offerIdentifier"] as? String == "welcome")
        #expect(claims["transactionId"] as? String == "2000000000000001" && claims["allowIntroductoryOffer"] == nil)
        // Without a transaction id the claim is left out.
        let bare = try Self.decode(try Self.signer.promotionalV2(productID: "vip.monthly", offerID: "welcome", transactionID: nil, issuedAt: 1))
        #expect(bare.valid && bare.claims["transactionId"] == nil)
    }

    @Test func anIntroductoryEligibilityIsAJWSWithItsAnswer() throws {
        for allow in [true, false] {
            let jws = try Self.signer.introductoryEligibility(
                productID: "vip.yearly", allow: allow, transactionID: "2000000000000009", issuedAt: 1_764_000_000)
            let (header, claims, valid) = try Self.decode(jws)
            #expect(valid && header["kid"] as? String == "OFFERKEY01")
            #expect(claims["aud"] as? String == "introductory-offer-eligibility" && claims["productId"] as? String == "vip.yearly")
            #expect(claims["allowIntroductoryOffer"] as? Bool == allow && claims["transactionId"] as? String == "2000000000000009")
            #expect(claims["offerIdentifier"] == nil && claims["bid"] as? String == "com.example.game")
        }
    }

    @Test func theJWSKindsNeedAnIssuer() throws {
        let v1Only = OfferSigner(keyID: "K", issuerID: nil, bundleID: "com.example.game", privateKey: Self.key)
        #expect(throws: OfferSigner.SigningError.noIssuerID) {
            try v1Only.promotionalV2(productID: "p", offerID: "o", transactionID: nil, issuedAt: 1)
        }
        #expect(throws: OfferSigner.SigningError.noIssuerID) {
            try v1Only.introductoryEligibility(productID: "p", allow: true, transactionID: "1", issuedAt: 1)
        }
        _ = try v1Only.promotional(productID: "p", offerID: "o", applicationUsername: "", timestamp: 1)
    }
}
