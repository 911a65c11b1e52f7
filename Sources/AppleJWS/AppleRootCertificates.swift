import Foundation
import SwiftASN1
import X509

/// The roots signed data must chain to. Only these are trusted: the root a JWS carries in `x5c`
/// is never looked at.
public enum AppleRootCertificates {
    /// Apple Root CA - G3 (EC P-384, valid 2014-04-30 → 2039-04-30), the anchor of every StoreKit 2
    /// signature. SHA-256 fingerprint 63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79.
    public static let appleRootCAG3: Certificate = {
        // Public data, checked against its fingerprint by the tests.
        let der = Data(base64Encoded: appleRootCAG3Base64, options: .ignoreUnknownCharacters)!
        return try! Certificate(derEncoded: Array(der))
    }()

    static let appleRootCAG3Base64 = """
        MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwSQXBwbGUgUm9vdCBDQSAtIEczMSYwJAYDVQQL
        DB1BcHBsZSBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcNMTQwNDMw
        MTgxOTA2WhcNMzkwNDMwMTgxOTA2WjBnMRswGQYDVQQDDBJBcHBsZSBSb290IENBIC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRp
        ZmljYXRpb24gQXV0aG9yaXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqGSM49AgEGBSuBBAAiA2IA
        BJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtfTjjTuxxEtX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqX
        l5dvMVztK517IDvYuVTZXpmkOlEKMaNCMEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySrMA8GA1UdEwEB/wQFMAMBAf8w
        DgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2gAMGUCMQCD6cHEFl4aXTQY2e3v9GwOAEZLuN+yRhHFD/3meoyhpmvOwgPUnPWT
        xnS4at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkLF1vLUagM6BgD56KyKA==
        """

    /// Reads roots from files (`IAP_APPLE_ROOT_CERTS`): each file PEM (one or more certificates) or DER.
    public static func load(paths: [String]) throws(RootCertificateError) -> [Certificate] {
        var roots: [Certificate] = []
        for path in paths {
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw RootCertificateError(path: path, detail: "cannot be read")
            }
            let text = String(decoding: bytes, as: UTF8.self)
            do {
                if text.contains("-----BEGIN CERTIFICATE-----") {
                    let documents = try PEMDocument.parseMultiple(pemString: text).filter { $0.discriminator == "CERTIFICATE" }
                    roots += try documents.map { try Certificate(pemDocument: $0) }
                } else {
                    roots.append(try Certificate(derEncoded: Array(bytes)))
                }
            } catch {
                throw RootCertificateError(path: path, detail: "not a PEM or DER certificate (\(error))")
            }
        }
        guard !roots.isEmpty else { throw RootCertificateError(path: paths.joined(separator: ","), detail: "no certificate found") }
        return roots
    }
}

/// A root certificate file that cannot be used.
public struct RootCertificateError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var detail: String

    public var description: String { "\(path): \(detail)" }
}
