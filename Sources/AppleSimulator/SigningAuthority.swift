import AppleJWS
@preconcurrency import Crypto
import Foundation
import SwiftASN1
import X509

/// A stand-in for Apple's certificate hierarchy: a root, a WWDR-like intermediate and a
/// receipt-signing leaf, shaped like Apple's (marker OIDs included), so that apple-sim and the
/// tests sign data the pipeline verifies with exactly the checks it applies to Apple's. Its root
/// reaches the pipeline only through `IAP_APPLE_ROOT_CERTS`.
public struct SigningAuthority: Sendable {
    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate
    public let leafKey: P256.Signing.PrivateKey
    /// The intermediate's key: what an OCSP responder for the leaf signs its answers with.
    public let intermediateKey: P256.Signing.PrivateKey

    /// What to leave out or change, for tests of each rejection.
    public struct Options: Sendable {
        public var leafMarker = true
        public var intermediateMarker = true
        public var leafValidity: ClosedRange<Date>?
        public var name = "IAP Test"
        /// Where the leaf says its revocation status is asked (an OCSP responder's URL, in its
        /// Authority Information Access), as Apple's leaves do; `nil`: none.
        public var ocspURL: String?

        public init() {}
    }

    public static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    public static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    public init(options: Options = Options()) throws {
        let now = Date()
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        self.intermediateKey = intermediateKey
        leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("\(options.name) Root CA"); OrganizationName("IAP Pipeline Test") }
        let intermediateName = try DistinguishedName {
            CommonName("\(options.name) WWDR Intermediate"); OrganizationName("IAP Pipeline Test")
        }
        let leafName = try DistinguishedName { CommonName("\(options.name) StoreKit Signing"); OrganizationName("IAP Pipeline Test") }
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: now.addingTimeInterval(-10 * 365 * 86400), notValidAfter: now.addingTimeInterval(20 * 365 * 86400),
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: now.addingTimeInterval(-5 * 365 * 86400), notValidAfter: now.addingTimeInterval(15 * 365 * 86400),
            issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                if options.intermediateMarker { Self.marker(Self.intermediateOID) }
            },
            issuerPrivateKey: .init(rootKey))
        let validity = options.leafValidity ?? now.addingTimeInterval(-2 * 365 * 86400)...now.addingTimeInterval(5 * 365 * 86400)
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound,
            issuer: intermediateName, subject: leafName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if options.leafMarker { Self.marker(Self.leafOID) }
                if let url = options.ocspURL {
                    AuthorityInformationAccess([.init(method: .ocspServer, location: .uniformResourceIdentifier(url))])
                }
            },
            issuerPrivateKey: .init(intermediateKey))
    }

    /// Apple's marker extensions carry an ASN.1 NULL.
    static func marker(_ oid: ASN1ObjectIdentifier) -> Certificate.Extension {
        Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
    }

    /// The `x5c` header Apple sends: leaf, intermediate, root, each standard base64 DER.
    public var x5c: [String] {
        [leaf, intermediate, root].map { Data(Self.der($0)).base64EncodedString() }
    }

    /// A signer of Apple-shaped JWS (alg ES256, this chain in `x5c`).
    public var signer: CompactJWSSigner {
        CompactJWSSigner(key: leafKey, header: .init(alg: "ES256", x5c: x5c))
    }

    /// The root as PEM, for a file named by `IAP_APPLE_ROOT_CERTS`.
    public var rootPEM: String {
        // A certificate built here always serializes.
        try! root.serializeAsPEM().pemString
    }

    public static func der(_ certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
