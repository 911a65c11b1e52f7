import AppleJWS
@preconcurrency import Crypto
import Foundation
import Hummingbird
import NIOConcurrencyHelpers

/// Plays StoreKit's check of an offer signature the server made: a test registers an In-App
/// Purchase key's public part (`POST /control/offer-keys {key_id, public_key_pem}`), then hands in
/// what the app would pass to StoreKit (`POST /control/offers/check`):
/// - `{"kind": "promotional", bundle_id, product_id, offer_id, app_account_token, key_id, nonce,
///   timestamp, signature}` (Apple's v1 fields);
/// - `{"kind": "promotional_v2" | "introductory_eligibility", bundle_id, product_id, offer_id?, jws}`.
///
/// It answers `{"valid": true, …the claims}` or `{"valid": false, "reason": "…"}` naming the first
/// thing StoreKit would refuse: an unknown key, a signature that does not verify, a field that
/// differs from the purchase's, a nonce that is not a lower-case UUID, a stale timestamp.
public final class SimulatedOfferCheck: Sendable {
    private let keys = NIOLockedValueBox<[String: P256.Signing.PublicKey]>([:])
    /// How old a signature StoreKit still takes (v1: Apple documents 24 hours).
    public static let maxAge: Int64 = 24 * 3600

    public init() {}

    public func register(keyID: String, publicKey: P256.Signing.PublicKey) {
        keys.withLockedValue { $0[keyID] = publicKey }
    }

    func register(on router: Router<some RequestContext>) {
        router.post("/control/offer-keys") { request, context in
            let order = try await request.decode(as: KeyOrder.self, context: context)
            guard let key = try? P256.Signing.PublicKey(pemRepresentation: order.publicKeyPEM) else {
                throw HTTPError(.badRequest, message: "public_key_pem is not a P-256 public key in PEM")
            }
            self.register(keyID: order.keyID, publicKey: key)
            return HTTPResponse.Status.noContent
        }
        router.post("/control/offers/check") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            let fields = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
            let answer: [String: Any]
            switch self.check(fields, now: Int64(Date().timeIntervalSince1970)) {
            case .success(let claims): answer = claims.merging(["valid": true]) { $1 }
            case .failure(let refusal): answer = ["valid": false, "reason": refusal.reason]
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(data: AppleSimulator.json(answer))))
        }
    }

    public struct Refusal: Error, Equatable {
        public var reason: String
    }

    /// StoreKit's check of `fields` at `now` (seconds): the claims it read, or why it refuses.
    public func check(_ fields: [String: Any], now: Int64) -> Result<[String: Any], Refusal> {
        func refuse(_ reason: String) -> Result<[String: Any], Refusal> { .failure(Refusal(reason: reason)) }
        let kind = fields["kind"] as? String ?? ""
        guard let bundleID = fields["bundle_id"] as? String, let productID = fields["product_id"] as? String else {
            return refuse("bundle_id and product_id are what the app buys: both required")
        }
        if kind == "promotional" {
            guard let keyID = fields["key_id"] as? String, let nonce = fields["nonce"] as? String,
                  let timestamp = (fields["timestamp"] as? NSNumber)?.int64Value, let signature = fields["signature"] as? String,
                  let offerID = fields["offer_id"] as? String
            else { return refuse("a promotional offer needs offer_id, key_id, nonce, timestamp and signature") }
            guard let key = keys.withLockedValue({ $0[keyID] }) else { return refuse("unknown key_id \(keyID)") }
            guard Self.isLowercaseUUID(nonce) else { return refuse("nonce is not a lower-case UUID") }
            guard abs(now - timestamp / 1000) <= Self.maxAge else { return refuse("timestamp is more than 24 hours away") }
            let token = fields["app_account_token"] as? String ?? ""
            let message = [bundleID, keyID, productID, offerID, token.lowercased(), nonce, String(timestamp)].joined(separator: "\u{2063}")
            guard let der = Data(base64Encoded: signature), let parsed = try? P256.Signing.ECDSASignature(derRepresentation: der),
                  key.isValidSignature(parsed, for: Data(message.utf8))
            else { return refuse("signature does not verify") }
            return .success(["key_id": keyID, "offer_id": offerID])
        }
        guard kind == "promotional_v2" || kind == "introductory_eligibility" else { return refuse("unknown kind \(kind)") }
        guard let jws = fields["jws"] as? String else { return refuse("jws required") }
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
              let signatureBytes = Base64URL.decode(parts[2]),
              let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
              let claims = (try? JSONSerialization.jsonObject(with: Data(payloadBytes))) as? [String: Any]
        else { return refuse("not a compact JWS") }
        guard header["alg"] as? String == "ES256", header["typ"] as? String == "JWT" else { return refuse("header must be ES256, JWT") }
        guard let keyID = header["kid"] as? String, let key = keys.withLockedValue({ $0[keyID] }) else {
            return refuse("unknown kid \(header["kid"] as? String ?? "")")
        }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
              key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { return refuse("signature does not verify") }
        let audience = kind == "promotional_v2" ? "promotional-offer" : "introductory-offer-eligibility"
        guard claims["aud"] as? String == audience else { return refuse("aud is not \(audience)") }
        guard claims["bid"] as? String == bundleID else { return refuse("bid is not the app's bundle id") }
        guard claims["productId"] as? String == productID else { return refuse("productId is not the product bought") }
        guard let issuer = claims["iss"] as? String, !issuer.isEmpty else { return refuse("iss (the issuer id) is missing") }
        guard let nonce = claims["nonce"] as? String, Self.isLowercaseUUID(nonce) else { return refuse("nonce is not a lower-case UUID") }
        guard let issuedAt = (claims["iat"] as? NSNumber)?.int64Value, abs(now - issuedAt) <= Self.maxAge else {
            return refuse("iat is missing or more than 24 hours away")
        }
        guard claims["exp"] == nil else { return refuse("exp must not be set (StoreKit computes the expiry from iat)") }
        if kind == "promotional_v2" {
            guard claims["offerIdentifier"] as? String == fields["offer_id"] as? String, claims["offerIdentifier"] != nil else {
                return refuse("offerIdentifier is not the offer bought")
            }
        } else {
            guard claims["allowIntroductoryOffer"] is Bool, claims["transactionId"] is String else {
                return refuse("allowIntroductoryOffer (a boolean) and transactionId are required")
            }
        }
        return .success(claims.merging(["key_id": keyID]) { $1 })
    }

    static func isLowercaseUUID(_ text: String) -> Bool {
        UUID(uuidString: text) != nil && text == text.lowercased()
    }

    struct KeyOrder: Decodable {
        var keyID: String
        var publicKeyPEM: String

        enum CodingKeys: String, CodingKey {
            case keyID = "key_id"
            case publicKeyPEM = "public_key_pem"
        }
    }
}
