import Crypto
import Foundation
import SwiftASN1
import X509

/// A root CA and a server certificate it signed for `localhost` and 127.0.0.1, as PEM files in a
/// folder of their own: for servers the tests start over TLS (redis-server's `tls-port`).
public struct TestCertificates: Sendable {
    public let folder: URL
    public var caFile: String { folder.appendingPathComponent("ca.pem").path }
    public var certificateFile: String { folder.appendingPathComponent("server.pem").path }
    public var keyFile: String { folder.appendingPathComponent("server-key.pem").path }

    /// `name`: the root's common name (two sets made with different names trust nothing of each other).
    public init(name: String = "IAP Pipeline Test Root") throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("test-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let now = Date()
        let rootKey = P256.Signing.PrivateKey()
        let serverKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName(name) }
        let serverName = try DistinguishedName { CommonName("localhost") }
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86400),
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86400),
            issuer: rootName, subject: serverName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth, .clientAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(rootKey))
        try root.serializeAsPEM().pemString.write(toFile: caFile, atomically: true, encoding: .utf8)
        try server.serializeAsPEM().pemString.write(toFile: certificateFile, atomically: true, encoding: .utf8)
        try serverKey.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
    }

    public func remove() { try? FileManager.default.removeItem(at: folder) }
}
