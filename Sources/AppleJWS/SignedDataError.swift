/// Why signed data from Apple was refused. Every case means "not trusted": the caller rejects the
/// data with `invalid_signature`; `description` is the precise cause for logs and `last_error`
/// (it never quotes the token).
public enum SignedDataError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not three base64url segments, or a header or payload that is not a JSON object.
    case malformed(String)
    /// The header's `alg` is not `ES256`.
    case unsupportedAlgorithm(String)
    /// `x5c` does not hold exactly three certificates.
    case wrongChainLength(Int)
    /// A certificate in `x5c` is not base64 DER.
    case unreadableCertificate(String)
    /// No path from the leaf through the intermediate to a configured root, valid at the signing time.
    case untrustedChain(String)
    /// The ES256 signature does not match the leaf's key.
    case badSignature

    public var description: String {
        switch self {
        case .malformed(let detail): return "malformed JWS: \(detail)"
        case .unsupportedAlgorithm(let alg): return "unsupported alg \"\(alg.prefix(16))\" (only ES256)"
        case .wrongChainLength(let count): return "x5c holds \(count) certificates, not 3"
        case .unreadableCertificate(let detail): return "unreadable x5c certificate: \(detail)"
        case .untrustedChain(let detail): return "certificate chain not trusted: \(detail)"
        case .badSignature: return "signature does not verify with the leaf certificate's key"
        }
    }
}
