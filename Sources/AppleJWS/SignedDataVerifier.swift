@preconcurrency import Crypto
import Foundation
import PlainJSON
import Synchronization
@_spi(FixedExpiryValidationTime) import X509

/// Verifies what Apple signs (transactions, renewal info, notifications): a compact ES256 JWS
/// whose `x5c` leaf and intermediate must chain to one of *our* roots, with Apple's marker OIDs,
/// valid at the payload's `signedDate`. Verified chains are cached by their header, so a warm
/// verification costs one ES256 check and one JSON decode.
public final class SignedDataVerifier: Sendable {
    private let roots: CertificateStore
    /// `nil`: offline, as Apple's verifier without `enableOnlineChecks`.
    public let online: OnlineChecks?
    /// Headers whose chain was verified, looked through in order: Apple signs with a handful of
    /// leaves at a time, and comparing a 3 kB header's bytes with one or two others costs less than
    /// hashing it (as a dictionary's key did, with a String comparison after).
    private let cache = Mutex<[(header: [UInt8], leaf: TrustedLeaf)]>([])
    /// The cache is emptied past this many headers.
    static let cacheLimit = 64

    /// The key of a leaf whose chain was verified, and the times at which that whole chain is valid.
    struct TrustedLeaf: Sendable {
        var key: P256.Signing.PublicKey
        var validFrom: Date
        var validUntil: Date
    }

    /// Online checks (`IAP_APPLE_ONLINE_CHECKS`), as Apple's `enableOnlineChecks`: the chain is
    /// validated at the current time, not the payload's `signedDate`, and each certificate that
    /// names an OCSP responder is asked about: one the responder says is revoked is refused (a
    /// responder that cannot be reached is not a refusal). A verified chain is trusted again for
    /// `cacheFor` at most (Apple's: 15 minutes), then checked anew.
    public struct OnlineChecks: Sendable {
        public var requester: AnyOCSPRequester
        public var cacheFor: Duration
        public var now: @Sendable () -> Date

        public init(requester: AnyOCSPRequester, cacheFor: Duration = .seconds(900), now: @escaping @Sendable () -> Date = { Date() }) {
            self.requester = requester
            self.cacheFor = cacheFor
            self.now = now
        }
    }

    public init(rootCertificates: [Certificate], online: OnlineChecks? = nil) {
        self.roots = CertificateStore(rootCertificates)
        self.online = online
    }

    /// Verifies `jws` and returns its decoded payload; throws for anything not proven to come from Apple.
    public func verify<Payload: SignedPayload>(_ jws: String, as type: Payload.Type) async throws(SignedDataError) -> Payload {
        try await verifyKeepingPayload(jws, as: type).payload
    }

    /// `verify`, also answering the payload's JSON bytes exactly as Apple signed them: every
    /// member, those `Payload` does not decode too.
    public func verifyKeepingPayload<Payload: SignedPayload>(
        _ jws: String, as type: Payload.Type
    ) async throws(SignedDataError) -> (payload: Payload, signed: [UInt8]) {
        let parts = try Self.parts(of: jws)
        let (header, payloadBytes, signatureBytes) = (parts.header, parts.payload, parts.signature)
        let payload: Payload
        do {
            payload = try Payload.decode(signed: payloadBytes)
        } catch {
            throw .malformed("payload is not a \(Payload.self): \(Self.describe(error))")
        }
        let signedAt = payload.signedDate.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? Date()
        let key = try await trustedKey(header: header, at: online?.now() ?? signedAt)
        guard signatureBytes.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes) else {
            throw .badSignature
        }
        // The signing input is the ASCII of "header.payload", exactly as it arrived.
        guard key.isValidSignature(signature, for: parts.signingInputDigest) else { throw .badSignature }
        return (payload, payloadBytes)
    }

    /// A compact JWS taken apart: its header segment (the chain cache's key), its payload and
    /// signature decoded, and the SHA-256 of the signing input (the ASCII of "header.payload",
    /// exactly as it arrived), hashed in place rather than copied out first. Read over the token's
    /// UTF-8 bytes in place, the dots found with `memchr`: index by index through a string's views
    /// cost a fifth of a verification, a byte loop over the 5 kB token a few µs more.
    package static func parts(
        of jws: String
    ) throws(SignedDataError) -> (header: Substring, payload: [UInt8], signature: [UInt8], signingInputDigest: SHA256Digest) {
        var jws = jws
        jws.makeContiguousUTF8()
        let split: Result<(firstDot: Int, payload: [UInt8], signature: [UInt8], digest: SHA256Digest), SignedDataError>? =
            jws.utf8.withContiguousStorageIfAvailable { bytes in
                guard let (firstDot, secondDot) = dots(in: bytes) else { return .failure(.malformed("not three base64url segments")) }
                guard let payload = Base64URL.decode(bytes[(firstDot + 1)..<secondDot]) else {
                    return .failure(.malformed("payload is not base64url"))
                }
                guard let signature = Base64URL.decode(bytes[(secondDot + 1)...]) else {
                    return .failure(.malformed("signature is not base64url"))
                }
                let digest = SHA256.hash(data: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[..<secondDot])))
                return .success((firstDot, payload, signature, digest))
            }
        guard let split else { throw .malformed("not three base64url segments") }  // never: the bytes were made contiguous
        let parts = try split.get()
        let utf8 = jws.utf8
        let header = Substring(utf8[..<utf8.index(utf8.startIndex, offsetBy: parts.firstDot)])
        return (header, parts.payload, parts.signature, parts.digest)
    }

    /// The offsets of a compact JWS's two dots: exactly two, each segment non-empty; `nil` otherwise.
    private static func dots(in bytes: UnsafeBufferPointer<UInt8>) -> (Int, Int)? {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return nil }
        func dot(from start: Int) -> Int? {
            guard start < bytes.count, let found = memchr(base + start, Int32(UInt8(ascii: ".")), bytes.count - start) else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        guard let first = dot(from: 0), let second = dot(from: first + 1), dot(from: second + 1) == nil,
              first > 0, second > first + 1, second + 1 < bytes.count
        else { return nil }
        return (first, second)
    }

    /// The leaf key of a header whose chain is trusted at `time`, from the cache or a full check.
    private func trustedKey(header: Substring, at time: Date) async throws(SignedDataError) -> P256.Signing.PublicKey {
        var header = header
        if let cached = header.withUTF8({ bytes in cache.withLock { $0.first { $0.header.isSame(as: bytes) }?.leaf } }),
           cached.validFrom <= time, time <= cached.validUntil
        {
            return cached.key
        }
        let trusted = try await validate(header: header, at: time)
        cache.withLock { entries in
            let bytes = Array(header.utf8)
            entries.removeAll { $0.header == bytes }  // one whose validity had ended
            if entries.count >= Self.cacheLimit { entries.removeAll() }
            entries.append((bytes, trusted))
        }
        return trusted.key
    }

    private func validate(header: Substring, at time: Date) async throws(SignedDataError) -> TrustedLeaf {
        guard let headerBytes = Base64URL.decode(header) else { throw .malformed("header is not base64url") }
        let decoded: Header
        do {
            decoded = try JSONDecoder().decode(Header.self, from: Data(headerBytes))
        } catch {
            throw .malformed("header is not a JWS header: \(Self.describe(error))")
        }
        guard decoded.alg == "ES256" else { throw .unsupportedAlgorithm(decoded.alg) }
        guard let x5c = decoded.x5c, x5c.count == 3 else { throw .wrongChainLength(decoded.x5c?.count ?? 0) }
        // x5c[2] is never read: only our configured roots can end the chain.
        let leaf = try Self.certificate(x5c[0], "leaf")
        let intermediate = try Self.certificate(x5c[1], "intermediate")
        let online = self.online
        var verifier = Verifier(rootCertificates: roots) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            AppleMarkerPolicy()
            if let online {
                OCSPVerifierPolicy(failureMode: .hard, requester: online.requester, fixedExpiryValidationTime: time)
            }
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        switch result {
        case .validCertificate(let chain):
            guard let key = P256.Signing.PublicKey(chain[0].publicKey) else {
                throw .untrustedChain("the leaf's key is not P-256")
            }
            var until = chain.map(\.notValidAfter).min() ?? time
            if let online { until = min(until, time.addingTimeInterval(Double(online.cacheFor.components.seconds))) }
            return TrustedLeaf(key: key, validFrom: chain.map(\.notValidBefore).max() ?? time, validUntil: until)
        case .couldNotValidate(let failures):
            let reasons = failures.map { "\($0.policyFailureReason)" }
            throw .untrustedChain(reasons.isEmpty ? "no path from the leaf to a configured root" : reasons.joined(separator: "; "))
        }
    }

    private static func certificate(_ base64: String, _ role: String) throws(SignedDataError) -> Certificate {
        guard let der = Data(base64Encoded: base64) else { throw .unreadableCertificate("\(role) is not base64") }
        do {
            return try Certificate(derEncoded: Array(der))
        } catch {
            throw .unreadableCertificate("\(role) is not a DER certificate")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case let shape as JSONShapeError where shape.reason == "missing": return "missing \(shape.member)"
        case let shape as JSONShapeError: return "wrong type at \(shape.member)"
        default: return "not JSON"
        }
    }

    struct Header: Decodable {
        var alg: String
        var x5c: [String]?
    }
}
