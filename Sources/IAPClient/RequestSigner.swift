import Crypto
import PlainJSON

/// How a game backend signs its requests to the intake (`IAP_CLIENT_KEYS_FILE`): the one home of
/// the signed message's layout, used by the intake to check and by the drill's and the bench's
/// clients to sign. It lives in `IAPClient`, which links nothing of the pipeline: what a backend
/// (and every load tool) needs to sign, without the intake.
public struct RequestSigner: Sendable {
    public let keyID: String
    public let secret: String

    public init(keyID: String, secret: String) {
        self.keyID = keyID
        self.secret = secret
    }

    /// What is signed: `timestamp \n method \n target \n body`.
    public static func message(timestamp: String, method: String, target: String, body: some Collection<UInt8>) -> [UInt8] {
        var message = Array("\(timestamp)\n\(method)\n\(target)\n".utf8)
        message.append(contentsOf: body)
        return message
    }

    /// `X-IAP-Key`, `X-IAP-Timestamp` and `X-IAP-Signature` for one attempt of a request.
    public func headers(method: String, target: String, body: some Collection<UInt8>, timestamp: Int64) -> [(String, String)] {
        let message = Self.message(timestamp: String(timestamp), method: method, target: target, body: body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: key)
        return [("X-IAP-Key", keyID), ("X-IAP-Timestamp", String(timestamp)), ("X-IAP-Signature", Hex.encode(mac))]
    }

    /// Whether `signature` (hex, either case) is this signer's HMAC of the request: the check the
    /// intake makes once the key is found and the timestamp is fresh. Constant time.
    public func isValid(signature: String, method: String, target: String, body: some Collection<UInt8>, timestamp: String) -> Bool {
        Self.isValid(signature: signature, method: method, target: target, body: body, timestamp: timestamp, key: key)
    }

    /// The same with the key alone (the intake's keyring holds keys, not signers).
    public static func isValid(
        signature: String, method: String, target: String, body: some Collection<UInt8>, timestamp: String, key: SymmetricKey
    ) -> Bool {
        guard let mac = Hex.decode(signature) else { return false }
        return isValid(mac: mac, method: method, target: target, body: body, timestamp: timestamp, key: key)
    }

    /// The same with the signature's bytes (the intake decodes the header once, to say which
    /// refusal it is).
    public static func isValid(
        mac: [UInt8], method: String, target: String, body: some Collection<UInt8>, timestamp: String, key: SymmetricKey
    ) -> Bool {
        guard mac.count == SHA256.byteCount else { return false }
        let message = message(timestamp: timestamp, method: method, target: target, body: body)
        return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: message, using: key)
    }

    private var key: SymmetricKey { SymmetricKey(data: Array(secret.utf8)) }

    /// The keys file that lets this signer in: `{"<key id>": "<secret>"}`.
    public var keysFile: String { JSONValue.object([keyID: .string(secret)]).canonicalText }
}
