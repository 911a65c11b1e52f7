@preconcurrency import Crypto
import AppleJWS
import Foundation
import Synchronization

/// The ES256 JWT that authenticates us to the App Store Server API ("Generating JSON Web Tokens
/// for API requests"): header `alg`, `kid`, `typ`; claims `iss`, `iat`, `exp`, `aud`, `bid`.
/// One token is reused until shortly before it expires.
public final class ServerAPIToken: Sendable {
    /// Apple accepts at most 60 minutes; ours live 30 and are replaced 5 before the end.
    public static let lifetime: Duration = .seconds(30 * 60)
    static let renewBefore: Duration = .seconds(5 * 60)

    private let signer: CompactJWSSigner
    private let issuerID: String
    private let bundleID: String
    private let current = Mutex<(token: String, expires: Int64)?>(nil)

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

    /// A valid token, signed anew when the cached one is near its end.
    public func token(now: Date = Date()) throws -> String {
        let seconds = Int64(now.timeIntervalSince1970)
        if let cached = current.withLock({ $0 }), cached.expires - Self.renewBefore.components.seconds > seconds {
            return cached.token
        }
        let claims = Claims(
            iss: issuerID, iat: seconds, exp: seconds + Self.lifetime.components.seconds, aud: "appstoreconnect-v1",
            bid: bundleID)
        let token = try signer.sign(payload: claims)
        current.withLock { $0 = (token, claims.exp) }
        return token
    }
}
