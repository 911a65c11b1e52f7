import Foundation

/// A payload Apple signs. `signedDate` (milliseconds since 1970) is the time the chain is checked at.
public protocol SignedPayload: Decodable, Sendable {
    var signedDate: Int64? { get }
    /// The payload from the JSON bytes Apple signed: Foundation's `JSONDecoder` unless the payload
    /// reads itself (a signed transaction does: the decoder was the largest cost of a verification
    /// after the ES256 check).
    static func decode(signed bytes: [UInt8]) throws -> Self
}

extension SignedPayload {
    public static func decode(signed bytes: [UInt8]) throws -> Self {
        try JSONDecoder().decode(Self.self, from: Data(bytes))
    }
}
