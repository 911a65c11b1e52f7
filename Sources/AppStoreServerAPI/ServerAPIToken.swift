@preconcurrency import Crypto
import AppleJWS
import Foundation

/// The ES256 JWT that authenticates us to the App Store Server API ("Generating JSON Web Tokens
/// for API requests"): header `alg`, `kid`, `typ`; claims `iss`, `iat`, `exp`, `aud`, `bid`.
/// A new token for every request, as Apple advises: signing one costs a few tens of microseconds
/// (the `jws` bench measures it), nothing beside a call to Apple.
public final class ServerAPIToken: Sendable {
    /// Apple accepts at most 60 minutes; each token lives 5 (a request, with room for clock skew).
    public static let lifetime: Duration = .seconds(5 * 60)

    private let signer: CompactJWSSigner
    private let issuerID: String
    private let bundleID: String

    public struct Claims: Codable, Sendable, Equatable {
        public var iss: String
        public var iat: Int64
        public var exp: Int64
        public var aud: String
        public var bid: String
    }

    public init(keyID: String, issuerID: String, privateKey: P256.Signing.PrivateKey, bundleID: String) {
        signer = CompactJWSSigner(key: privateKey, header: .init(alg: "ES256", kid: keyID, typ: "JWT"))
        self.issuerID = issuerID
        self.bundleID = bundleID
    }

    /// A new token, signed now.
    public func token(now: Date = Date()) throws -> String {
        let seconds = Int64(now.timeIntervalSince1970)
        let claims = Claims(
            iss: issuerID, iat: seconds, exp: seconds + Self.lifetime.components.seconds, aud: "appstoreconnect-v1",
            bid: bundleID)
        return try signer.sign(payload: claims)
    }
}
