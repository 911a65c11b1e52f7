@preconcurrency import Crypto
import AppleJWS
import Foundation
import PlainJSON

/// The signatures StoreKit needs from the server before it applies an offer, made with the app's
/// In-App Purchase key (App Store Connect → Users and Access → Integrations → In-App Purchase), as
/// Apple's server libraries make them:
/// - a promotional offer's v1 signature: ECDSA P-256 SHA-256 (DER, base64) over the bundle id, key
///   id, product, offer, application username, nonce and timestamp joined by U+2063;
/// - a promotional offer's V2 signature and an introductory offer's eligibility: compact JWS
///   (`alg` ES256, `kid`, `typ` JWT; claims `iss`, `iat`, `aud`, `bid`, `nonce` and the feature's own).
public struct OfferSigner: Sendable {
    public let keyID: String
    /// The issuer id of the App Store Connect team (`iss` of the JWS kinds); `nil`: only v1 signatures.
    public let issuerID: String?
    public let bundleID: String
    private let key: P256.Signing.PrivateKey
    private let jws: CompactJWSSigner

    public init(keyID: String, issuerID: String?, bundleID: String, privateKey: P256.Signing.PrivateKey) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        key = privateKey
        jws = CompactJWSSigner(key: privateKey, header: .init(alg: "ES256", kid: keyID, typ: "JWT"))
    }

    /// What StoreKit's `Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)` takes.
    public struct PromotionalSignature: Sendable, Equatable {
        public var keyID: String
        /// Lower-case UUID.
        public var nonce: String
        /// Milliseconds since 1970.
        public var timestamp: Int64
        /// Standard base64 of the DER ECDSA signature.
        public var signature: String
    }

    public enum SigningError: Error, Equatable, CustomStringConvertible {
        /// A JWS kind needs the team's issuer id, which this signer was not given.
        case noIssuerID

        public var description: String { "no issuer id: the JWS offer signatures need IAP_APPLE_API_ISSUER_ID or the app's issuer_id" }
    }

    /// The separator Apple joins the v1 signature's fields with (INVISIBLE SEPARATOR).
    public static let separator = "\u{2063}"

    /// The v1 message: what is signed, and what StoreKit rebuilds to check the signature.
    public static func promotionalMessage(
        bundleID: String, keyID: String, productID: String, offerID: String, applicationUsername: String, nonce: String,
        timestamp: Int64
    ) -> String {
        [bundleID, keyID, productID, offerID, applicationUsername.lowercased(), nonce.lowercased(), String(timestamp)]
            .joined(separator: separator)
    }

    /// A promotional offer's v1 signature. `applicationUsername`: the purchase's app account token
    /// (lower-cased here, as StoreKit does), or empty when the purchase will carry none.
    public func promotional(
        productID: String, offerID: String, applicationUsername: String, nonce: UUID = UUID(), timestamp: Int64
    ) throws -> PromotionalSignature {
        let nonceText = nonce.uuidString.lowercased()
        let message = Self.promotionalMessage(
            bundleID: bundleID, keyID: keyID, productID: productID, offerID: offerID, applicationUsername: applicationUsername,
            nonce: nonceText, timestamp: timestamp)
        let signature = try key.signature(for: Data(message.utf8))
        return PromotionalSignature(
            keyID: keyID, nonce: nonceText, timestamp: timestamp, signature: signature.derRepresentation.base64EncodedString())
    }

    /// The claims every JWS kind carries, with the feature's own.
    public struct Claims: Codable, Sendable, Equatable {
        public var iss: String
        /// Seconds since 1970.
        public var iat: Int64
        public var aud: String
        public var bid: String
        public var nonce: String
        public var productId: String
        public var offerIdentifier: String?
        public var transactionId: String?
        public var allowIntroductoryOffer: Bool?

        /// The claims as JSON, absent members left out.
        var json: JSONValue {
            var object: JSONObject = [
                "iss": .string(iss), "iat": .int(Int(iat)), "aud": .string(aud), "bid": .string(bid), "nonce": .string(nonce),
                "productId": .string(productId),
            ]
            if let offerIdentifier { object["offerIdentifier"] = .string(offerIdentifier) }
            if let transactionId { object["transactionId"] = .string(transactionId) }
            if let allowIntroductoryOffer { object["allowIntroductoryOffer"] = .bool(allowIntroductoryOffer) }
            return .object(object)
        }
    }

    /// `aud` of a promotional offer's V2 signature.
    public static let promotionalAudience = "promotional-offer"
    /// `aud` of an introductory offer's eligibility.
    public static let introductoryAudience = "introductory-offer-eligibility"

    /// A promotional offer's V2 signature (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`).
    /// `transactionID`: optional, any transaction of the customer.
    public func promotionalV2(
        productID: String, offerID: String, transactionID: String?, nonce: UUID = UUID(), issuedAt: Int64
    ) throws -> String {
        try sign(Claims(
            iss: try issuer(), iat: issuedAt, aud: Self.promotionalAudience, bid: bundleID, nonce: nonce.uuidString.lowercased(),
            productId: productID, offerIdentifier: offerID, transactionId: transactionID))
    }

    /// Whether the customer may have the product's introductory offer
    /// (`Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)`). `transactionID`: any
    /// transaction of the customer, or their `appTransactionId`.
    public func introductoryEligibility(
        productID: String, allow: Bool, transactionID: String, nonce: UUID = UUID(), issuedAt: Int64
    ) throws -> String {
        try sign(Claims(
            iss: try issuer(), iat: issuedAt, aud: Self.introductoryAudience, bid: bundleID, nonce: nonce.uuidString.lowercased(),
            productId: productID, transactionId: transactionID, allowIntroductoryOffer: allow))
    }

    private func issuer() throws(SigningError) -> String {
        guard let issuerID, !issuerID.isEmpty else { throw .noIssuerID }
        return issuerID
    }

    /// The claims written by PlainJSON (names sorted, as `JSONEncoder` with `.sortedKeys` wrote
    /// them): Foundation's encoder was most of a signature's cost after the ES256 step.
    private func sign(_ claims: Claims) throws -> String {
        try jws.sign(payloadBytes: Data(claims.json.canonicalText.utf8))
    }
}
