import Crypto
import Foundation
import PlainJSON

/// How a backend checks a webhook delivery's `X-IAP-Signature: t=<unix s>,v1=<hex>[,v1=<hex>]`
/// (docs/webhooks.md), and the one home of that layout: the pipeline's webhook stage signs with
/// `header(body:timestamp:secrets:)`. A delivery is valid when `t` is within `tolerance` of now and
/// any `v1` is the HMAC-SHA256 of `"<t>." + body` with any of the receiver's secrets (two during a
/// rotation). A garbled header is `false`, never an error; comparisons are constant time.
public struct WebhookVerifier: Sendable {
    public let tolerance: Duration
    /// The secrets' bytes (a `SymmetricKey` is not `Sendable`; one is made per check).
    private let secrets: [[UInt8]]

    /// `secrets`: each one's UTF-8 text is an HMAC key (`IAP_WEBHOOK_SECRET`, and while rotating
    /// the one being retired).
    public init(secrets: [String], tolerance: Duration = .seconds(300)) {
        self.secrets = secrets.map { Array($0.utf8) }
        self.tolerance = tolerance
    }

    public init(secret: String, tolerance: Duration = .seconds(300)) {
        self.init(secrets: [secret], tolerance: tolerance)
    }

    /// Whether `header` signs `body` (the raw bytes as received, before any parsing) at a time
    /// within the tolerance of `now`.
    public func isValid(header: String?, body: some Collection<UInt8>, now: Date = Date()) -> Bool {
        isValid(header: header, body: body, nowSeconds: Int64(now.timeIntervalSince1970.rounded(.down)))
    }

    public func isValid(header: String?, body: some Collection<UInt8>, nowSeconds: Int64) -> Bool {
        guard let (timestamp, signatures) = Self.parse(header ?? ""), !signatures.isEmpty,
            abs(nowSeconds - timestamp) <= tolerance.components.seconds
        else { return false }
        let message = Self.message(body: body, timestamp: timestamp)
        return secrets.contains { secret in
            let key = SymmetricKey(data: secret)
            let expected = Array(Hex.encode(HMAC<SHA256>.authenticationCode(for: message, using: key)).utf8)
            return signatures.contains { Self.constantTimeEqual(Array($0.utf8), expected) }
        }
    }

    /// The header the pipeline sends: one `v1` per secret, the current one first.
    public static func header(body: some Collection<UInt8>, timestamp: Int64, secrets: [String]) -> String {
        let message = message(body: body, timestamp: timestamp)
        let signatures = secrets.map { secret in
            "v1=" + Hex.encode(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(secret.utf8))))
        }
        return (["t=\(timestamp)"] + signatures).joined(separator: ",")
    }

    private static func message(body: some Collection<UInt8>, timestamp: Int64) -> [UInt8] {
        Array("\(timestamp).".utf8) + body
    }

    /// `t` (digits only) and every `v1`; other parts are ignored; `nil` without a `t`.
    private static func parse(_ header: String) -> (Int64, [Substring])? {
        var timestamp: Int64?
        var signatures: [Substring] = []
        for part in header.split(separator: ",", omittingEmptySubsequences: true) {
            guard let equals = part.firstIndex(of: "=") else { continue }
            let name = part[..<equals]
            let value = part[part.index(after: equals)...]
            if name == "t", value.utf8.count <= 12, value.utf8.allSatisfy({ (48...57).contains($0) }) {
                timestamp = Int64(value)
            } else if name == "v1" {
                signatures.append(value)
            }
        }
        return timestamp.map { ($0, signatures) }
    }

    private static func constantTimeEqual(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
        given.count == expected.count && zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
