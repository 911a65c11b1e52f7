@preconcurrency import Crypto
import Foundation

/// Signs webhook bodies as Stripe-style receivers expect: `X-IAP-Signature: t=<unix seconds>,v1=<hex
/// HMAC-SHA256(secret, "<t>.<body>")>`. The receiver recomputes it with the shared secret, compares
/// in constant time, and refuses a `t` too far from its clock (a replay).
public struct WebhookSigner: Sendable {
    private let key: SymmetricKey

    public init(secret: String) {
        key = SymmetricKey(data: Data(secret.utf8))
    }

    public func signature(body: [UInt8], timestamp: Int64) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(contentsOf: body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: key)
        return "t=\(timestamp),v1=" + mac.map { String(format: "%02x", $0) }.joined()
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
        let expected = Array(signature(body: body, timestamp: timestamp).utf8)
        return signatures.contains { candidate in
            let given = Array("t=\(timestamp),v1=\(candidate)".utf8)
            // Constant time over equal lengths.
            return given.count == expected.count && zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }
}
