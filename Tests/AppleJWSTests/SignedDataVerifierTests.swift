@testable import AppleJWS
import AppleSimulator
import Crypto
import Foundation
import Testing
import X509

@Suite("Signed data from Apple: chain, markers, time, algorithm, signature")
struct SignedDataVerifierTests {
    static let now = Int64(Date().timeIntervalSince1970 * 1000)

    static func transaction(signedDate: Int64? = now, productID: String = "com.example.gold") -> JWSTransaction {
        JWSTransaction(
            transactionID: "2000000000000001", bundleID: "com.example.game", productID: productID, purchaseDate: now,
            type: "Consumable", signedDate: signedDate)
    }

    func expectRejected(
        _ jws: String, by verifier: SignedDataVerifier, sourceLocation: SourceLocation = #_sourceLocation,
        _ matches: (SignedDataError) -> Bool
    ) async {
        do {
            _ = try await verifier.verify(jws, as: JWSTransaction.self)
            Issue.record("accepted a JWS that must be refused", sourceLocation: sourceLocation)
        } catch {
            #expect(matches(error), "refused for the wrong cause: \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("Apple Root CA - G3 is built in with the fingerprint Apple publishes")
    func builtInRoot() throws {
        let der = SigningAuthority.der(AppleRootCertificates.appleRootCAG3)
        let fingerprint = SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(fingerprint == "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79")
    }

    @Test("a genuine JWS verifies, twice (the second from the cache), and decodes")
    func genuine() async throws {
        let authority = try SigningAuthority()
        let verifier = SignedDataVerifier(rootCertificates: [authority.root])
        for _ in 0..<2 {
            let jws = try authority.signer.sign(payload: Self.transaction())
            let decoded = try await verifier.verify(jws, as: JWSTransaction.self)
            #expect(decoded == Self.transaction())
        }
    }

    @Test("a chain to a root we do not configure is refused")
    func foreignRoot() async throws {
        let ours = try SigningAuthority()
        let theirs = try SigningAuthority()
        let verifier = SignedDataVerifier(rootCertificates: [ours.root])
        await expectRejected(try theirs.signer.sign(payload: Self.transaction()), by: verifier) {
            if case .untrustedChain = $0 { return true } else { return false }
        }
    }

    @Test("an attacker's root in x5c[2] is never trusted, nor is our root pasted there")
    func attackerRootInHeader() async throws {
        let ours = try SigningAuthority()
        let attacker = try SigningAuthority()
        let verifier = SignedDataVerifier(rootCertificates: [ours.root])
        // The attacker's own full chain, its root in x5c[2].
        await expectRejected(try attacker.signer.sign(payload: Self.transaction()), by: verifier) {
            if case .untrustedChain = $0 { return true } else { return false }
        }
        // The attacker's leaf and intermediate with our genuine root in x5c[2].
        var x5c = attacker.x5c
        x5c[2] = ours.x5c[2]
        let forged = CompactJWSSigner(key: attacker.leafKey, header: .init(alg: "ES256", x5c: x5c))
        await expectRejected(try forged.sign(payload: Self.transaction()), by: verifier) {
            if case .untrustedChain = $0 { return true } else { return false }
        }
    }

    @Test("a leaf or an intermediate without Apple's marker OID is refused")
    func missingMarkers() async throws {
        var noLeafMarker = SigningAuthority.Options()
        noLeafMarker.leafMarker = false
        var noIntermediateMarker = SigningAuthority.Options()
        noIntermediateMarker.intermediateMarker = false
        for (options, oid) in [(noLeafMarker, "6.11.1"), (noIntermediateMarker, "6.2.1")] {
            let authority = try SigningAuthority(options: options)
            let verifier = SignedDataVerifier(rootCertificates: [authority.root])
            await expectRejected(try authority.signer.sign(payload: Self.transaction()), by: verifier) {
                if case .untrustedChain(let detail) = $0 { return detail.contains(oid) } else { return false }
            }
        }
    }

    @Test("the chain is checked at signedDate: an old genuine payload verifies after its leaf expired, a later one does not")
    func validityAtSignedDate() async throws {
        var options = SigningAuthority.Options()
        let start = Date().addingTimeInterval(-400 * 86400)
        let end = Date().addingTimeInterval(-200 * 86400)
        options.leafValidity = start...end
        let authority = try SigningAuthority(options: options)
        let verifier = SignedDataVerifier(rootCertificates: [authority.root])
        let inside = Int64(start.addingTimeInterval(86400).timeIntervalSince1970 * 1000)
        let old = try authority.signer.sign(payload: Self.transaction(signedDate: inside))
        #expect(try await verifier.verify(old, as: JWSTransaction.self).signedDate == inside)
        // Same header, now cached: the cache must still apply the time check.
        await expectRejected(try authority.signer.sign(payload: Self.transaction(signedDate: Self.now)), by: verifier) {
            if case .untrustedChain = $0 { return true } else { return false }
        }
        // And a fresh verifier (no cache) refuses it too.
        await expectRejected(
            try authority.signer.sign(payload: Self.transaction(signedDate: Self.now)),
            by: SignedDataVerifier(rootCertificates: [authority.root])
        ) {
            if case .untrustedChain = $0 { return true } else { return false }
        }
    }

    @Test("alg none, HS256 and ES384 are refused whatever the chain", arguments: ["none", "HS256", "ES384"])
    func otherAlgorithms(alg: String) async throws {
        let authority = try SigningAuthority()
        let verifier = SignedDataVerifier(rootCertificates: [authority.root])
        let signer = CompactJWSSigner(key: authority.leafKey, header: .init(alg: alg, x5c: authority.x5c))
        await expectRejected(try signer.sign(payload: Self.transaction()), by: verifier) { $0 == .unsupportedAlgorithm(alg) }
    }

    @Test("a payload changed after signing is refused")
    func tamperedPayload() async throws {
        let authority = try SigningAuthority()
        let verifier = SignedDataVerifier(rootCertificates: [authority.root])
        let genuine = try authority.signer.sign(payload: Self.transaction(productID: "com.example.gold"))
        let forgedPayload = try authority.signer.sign(payload: Self.transaction(productID: "com.example.gold10000"))
        let parts = genuine.split(separator: ".")
        let swapped = [parts[0], forgedPayload.split(separator: ".")[1], parts[2]].joined(separator: ".")
        await expectRejected(swapped, by: verifier) { $0 == .badSignature }
        // A signature of the wrong length, and one byte flipped.
        await expectRejected(parts[0] + "." + parts[1] + ".AAAA", by: verifier) { $0 == .badSignature }
        var signature = Base64URL.decode(parts[2])!
        signature[10] ^= 1
        await expectRejected(parts[0] + "." + parts[1] + "." + Base64URL.encode(signature), by: verifier) { $0 == .badSignature }
    }

    @Test("x5c with two or four certificates, or none, is refused", arguments: [2, 4, 0])
    func chainLength(count: Int) async throws {
        let authority = try SigningAuthority()
        let verifier = SignedDataVerifier(rootCertificates: [authority.root])
        let x5c = Array((authority.x5c + authority.x5c).prefix(count))
        let signer = CompactJWSSigner(key: authority.leafKey, header: .init(alg: "ES256", x5c: x5c))
        await expectRejected(try signer.sign(payload: Self.transaction()), by: verifier) { $0 == .wrongChainLength(count) }
    }

    @Test("text that is not a JWS, or whose payload is not a transaction, is refused as malformed")
    func malformed() async throws {
        let authority = try SigningAuthority()
        let verifier = SignedDataVerifier(rootCertificates: [authority.root])
        let notATransaction = try authority.signer.sign(payload: ["hello": "world"])
        for text in ["", "a.b", "a.b.c.d", "not base64!.e30.AAAA", "e30.e30.", notATransaction] {
            await expectRejected(text, by: verifier) {
                if case .malformed = $0 { return true } else { return false }
            }
        }
    }

    @Test("a token is taken apart byte for byte: each empty segment, a fourth one and bad base64url are named")
    func parts() throws {
        let parts = try SignedDataVerifier.parts(of: "eyJhIjoxfQ.e30.AAEC")
        #expect(parts.header == "eyJhIjoxfQ")
        #expect(parts.payload == Array("{}".utf8))
        #expect(parts.signature == [0, 1, 2])
        #expect(parts.signingInputDigest == SHA256.hash(data: Data("eyJhIjoxfQ.e30".utf8)))
        let refusals: [(String, String)] = [
            (".e30.AAEC", "not three base64url segments"), ("eyJ9..AAEC", "not three base64url segments"),
            ("eyJ9.e30.", "not three base64url segments"), ("a.b.c.d", "not three base64url segments"),
            ("eyJ9.e3=.AAEC", "payload is not base64url"), ("eyJ9.e30.AA+C", "signature is not base64url"),
        ]
        for (token, reason) in refusals {
            #expect(throws: SignedDataError.malformed(reason), "\(token)") { try SignedDataVerifier.parts(of: token) }
        }
    }

    @Test("roots load from PEM and DER files; a bad file names itself")
    func rootFiles() throws {
        let authority = try SigningAuthority()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pem = directory.appendingPathComponent("a.pem").path
        let der = directory.appendingPathComponent("b.der").path
        let junk = directory.appendingPathComponent("junk.pem").path
        try authority.rootPEM.write(toFile: pem, atomically: true, encoding: .utf8)
        try Data(SigningAuthority.der(AppleRootCertificates.appleRootCAG3)).write(to: URL(fileURLWithPath: der))
        try "hello".write(toFile: junk, atomically: true, encoding: .utf8)
        let roots = try AppleRootCertificates.load(paths: [pem, der])
        #expect(roots == [authority.root, AppleRootCertificates.appleRootCAG3])
        #expect(throws: RootCertificateError.self) { try AppleRootCertificates.load(paths: [junk]) }
        #expect(throws: RootCertificateError.self) { try AppleRootCertificates.load(paths: [directory.appendingPathComponent("none").path]) }
    }

    @Test("compact-JWS shape check used by the intake")
    func shape() {
        #expect(Base64URL.isCompactJWS("eyJh.eyJi.c2ln"))
        #expect(!Base64URL.isCompactJWS("eyJh.eyJi"))
        #expect(!Base64URL.isCompactJWS("eyJh..c2ln"))
        #expect(!Base64URL.isCompactJWS("eyJh.eyJi.c2l="))
        #expect(!Base64URL.isCompactJWS("ey+h.eyJi.c2ln"))
        // Every segment non-empty and of a length base64url can have; exactly two dots.
        #expect(!Base64URL.isCompactJWS(".eyJi.c2ln") && !Base64URL.isCompactJWS("eyJh.eyJi.") && !Base64URL.isCompactJWS(""))
        #expect(!Base64URL.isCompactJWS("eyJh.eyJi.c2ln.c2ln") && !Base64URL.isCompactJWS("eyJhX.eyJi.c2ln"))
        #expect(Base64URL.isCompactJWS("eyJhXw.eyJiXw.c2lu") && !Base64URL.isCompactJWS("eyJh.eyJi.c2ln\n"))
        #expect(!Base64URL.isCompactJWS("eyJh.éyJi.c2ln"))
    }

    /// One payload, one spelling (RFC 4648 §3.5): a last character whose unused bits are set is
    /// refused, so a signed payload cannot be re-spelled into a new digest.
    @Test("base64url is canonical: unused tail bits must be zero")
    func canonicalBase64URL() {
        #expect(Base64URL.decode("QQ") == [0x41])
        #expect(Base64URL.decode("QR") == nil)
        #expect(Base64URL.decode("QUI") == [0x41, 0x42])
        #expect(Base64URL.decode("QUJ") == nil)
        #expect(Base64URL.decode("QUJD") == [0x41, 0x42, 0x43])
        let signature = Array(repeating: UInt8(0xAB), count: 64)
        let text = Base64URL.encode(signature)
        #expect(Base64URL.decode(Substring(text)) == signature)
        // 64 bytes end in 4 unused bits: the same value spelled with one of them set decodes no more.
        var respelled = Array(text.utf8)
        respelled[respelled.count - 1] += 1
        #expect(Base64URL.decode(Substring(String(decoding: respelled, as: UTF8.self))) == nil)
    }

    /// The block decoder against Foundation's base64 on every length from 0 to 70 and every byte
    /// value; a length of 4n+1, padding and characters outside the alphabet anywhere are refused.
    @Test("base64url decodes what Foundation encodes, at every length, and refuses the rest")
    func base64URLAgainstFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...70 {
            let bytes = (0..<length).map { index in length == 64 ? UInt8(truncatingIfNeeded: index * 4) : UInt8.random(in: 0...255, using: &generator) }
            let text = Base64URL.encode(bytes)
            #expect(Base64URL.decode(Substring(text)) == bytes, "\(length)")
            #expect(Base64URL.decode(Array(text.utf8)[...]) == bytes, "\(length)")
        }
        for refused in ["Q", "QUJDR", "QQ==", "QU=D", "Q+JD", "QUJ/", "QU D", "QUJD\n"] {
            #expect(Base64URL.decode(Substring(refused)) == nil, "\(refused)")
        }
        #expect(Base64URL.decode("") == [])
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
    }
}
