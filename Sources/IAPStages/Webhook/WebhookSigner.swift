@preconcurrency import Crypto
import Foundation

/// Signs webhook bodies as Stripe-style receivers expect: `X-IAP-Signature: t=<unix seconds>,v1=<hex
/// HMAC-SHA256(secret, "<t>.<body>")>`. The receiver recomputes it with the shared secret, compares
/// in constant time, and refuses a `t` too far from its clock (a replay).
/// During a rotation (`IAP_WEBHOOK_PREVIOUS_SECRET`) a second `v1=` is signed with the secret
/// being retired, as Stripe does while a secret rolls: a receiver that knows either accepts it.
public struct WebhookSigner: Sendable {
    private let key: SymmetricKey
    private let previousKey: SymmetricKey?

    public init(secret: String, previousSecret: String? = nil) {
        key = SymmetricKey(data: Data(secret.utf8))
        previousKey = previousSecret.map { SymmetricKey(data: Data($0.utf8)) }
    }

    public func signature(body: [UInt8], timestamp: Int64) -> String {
        var header = "t=\(timestamp),v1=" + Self.mac(body: body, timestamp: timestamp, key: key)
        if let previousKey { header += ",v1=" + Self.mac(body: body, timestamp: timestamp, key: previousKey) }
        return header
    }

    private static func mac(body: [UInt8], timestamp: Int64, key: SymmetricKey) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(contentsOf: body)
        return HMAC<SHA256>.authenticationCode(for: message, using: key).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `header` is a valid signature of `body` within `tolerance` seconds of `now`: what a
    /// receiver does (the tests and the example in docs/webhooks.md do the same).
    public func verify(header: String, body: [UInt8], now: Int64, tolerance: Int64 = 300) -> Bool {
        var timestamp: Int64?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int64(pair[1]) } else if pair[0] == "v1" { signatures.append(pair[1]) }
        }
        guard let timestamp, abs(now - timestamp) <= tolerance else { return false }
        // This signer's own secret (a receiver holds one; a rotation adds the new one beside the old).
        let expected = Array(Self.mac(body: body, timestamp: timestamp, key: key).utf8)
        return signatures.contains { candidate in
            let given = Array(candidate.utf8)
            // Constant time over equal lengths.
            return given.count == expected.count && zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }
}
