/// A payload Apple signs. `signedDate` (milliseconds since 1970) is the time the chain is checked at.
public protocol SignedPayload: Decodable, Sendable {
    var signedDate: Int64? { get }
}
