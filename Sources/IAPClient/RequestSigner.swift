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
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(secret.utf8)))
        return [("X-IAP-Key", keyID), ("X-IAP-Timestamp", String(timestamp)), ("X-IAP-Signature", Self.hex(mac))]
    }

    /// Lower-case hex, two digits a byte.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]] }
        return String(decoding: text, as: UTF8.self)
    }

    /// The keys file that lets this signer in: `{"<key id>": "<secret>"}`.
    public var keysFile: String { JSONValue.object([keyID: .string(secret)]).canonicalText }
}
