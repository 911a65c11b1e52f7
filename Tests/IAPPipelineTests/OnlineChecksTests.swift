import AppleJWS
import AppleSimulator
import Foundation
import Hummingbird
import IAPPipeline
import NIOCore
import PipelineTestSupport
import RedisClient
import Testing
import X509

/// `IAP_APPLE_ONLINE_CHECKS=on`, as Apple's `enableOnlineChecks`: a notification's chain is
/// validated now and its leaf's revocation status asked of the OCSP responder the leaf names (its
/// Authority Information Access, as Apple's leaves carry). The responder is OpenSSL's own
/// (`openssl ocsp -index`, answering what the index says, signed by the issuer), behind HTTP on
/// loopback.
@Suite(.serialized) struct OnlineChecksTests {
    /// apple-sim's hierarchy with its leaf naming `url` as its OCSP responder.
    static func authority(ocspURL url: String) throws -> SigningAuthority {
        var options = SigningAuthority.Options()
        options.ocspURL = url
        return try SigningAuthority(options: options)
    }

    /// An OCSP responder on a loopback port: OpenSSL answers each request from an index
    /// (`serve(_:revoked:)`: the leaf revoked or valid), signing with the leaf's issuer's key.
    final class Responder: Sendable {
        let folder: URL
        let server: RunningServer
        var url: String { "http://127.0.0.1:\(server.port)/" }

        init() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocsp-\(UUID().uuidString)")
            self.folder = folder
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let router = Router()
            router.post("/") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 64 << 10)
                let answer = try Self.answer(Array(body.readableBytesView), in: folder)
                return Response(
                    status: .ok, headers: [.contentType: "application/ocsp-response"], body: .init(byteBuffer: ByteBuffer(bytes: answer)))
            }
            server = try await RunningServer.start { onRunning in
                Application(
                    router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                    onServerRunning: { await onRunning($0.localAddress?.port ?? 0) }, logger: testLogger)
            }
        }

        /// Answers for `authority`'s leaf from now on: revoked, or valid.
        func serve(_ authority: SigningAuthority, revoked: Bool) throws {
            try authority.intermediate.serializeAsPEM().pemString.write(
                to: folder.appendingPathComponent("issuer.pem"), atomically: true, encoding: .utf8)
            try authority.intermediateKey.pemRepresentation.write(
                to: folder.appendingPathComponent("issuer-key.pem"), atomically: true, encoding: .utf8)
            let serial = authority.leaf.serialNumber.bytes.map { String(format: "%02X", $0) }.joined()
            let line = revoked
                ? "R\t491231235959Z\t251126000000Z\t\(serial)\tunknown\t/CN=leaf\n" : "V\t491231235959Z\t\t\(serial)\tunknown\t/CN=leaf\n"
            try line.write(to: folder.appendingPathComponent("index.txt"), atomically: true, encoding: .utf8)
        }

        /// `openssl ocsp` as a responder, on one request: DER in, DER out.
        static func answer(_ request: [UInt8], in folder: URL) throws -> [UInt8] {
            let id = UUID().uuidString
            let requestFile = folder.appendingPathComponent("\(id).req")
            let responseFile = folder.appendingPathComponent("\(id).resp")
            try Data(request).write(to: requestFile)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = [
                "ocsp", "-index", folder.appendingPathComponent("index.txt").path, "-CA", folder.appendingPathComponent("issuer.pem").path,
                "-rsigner", folder.appendingPathComponent("issuer.pem").path, "-rkey", folder.appendingPathComponent("issuer-key.pem").path,
                "-ndays", "1", "-reqin", requestFile.path, "-respout", responseFile.path,
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return Array(try Data(contentsOf: responseFile))
        }

        func stop() async {
            await server.stop()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    static func transaction(_ id: String) -> JWSTransaction {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return JWSTransaction(
            transactionID: id, bundleID: PipelineHarness.bundleID, productID: "gold.100", purchaseDate: now - 1000, type: "Consumable",
            signedDate: now, environment: "Production")
    }

    static func online() -> SignedDataVerifier.OnlineChecks { .init(requester: OCSPHTTPRequester.make()) }

    @Test func aLeafItsResponderSaysIsRevokedIsRefusedOnlineOnly() async throws {
        let responder = try await Responder()
        for revoked in [true, false] {
            let authority = try Self.authority(ocspURL: responder.url)
            try responder.serve(authority, revoked: revoked)
            let roots = [authority.root]
            let jws = try authority.signer.sign(payload: Self.transaction("4400000000000001"))
            let onlineVerifier = SignedDataVerifier(rootCertificates: roots, online: Self.online())
            if revoked {
                do {
                    _ = try await onlineVerifier.verify(jws, as: JWSTransaction.self)
                    Issue.record("a revoked leaf was trusted online")
                } catch {
                    guard case .untrustedChain(let reason) = error else { Issue.record("\(error)"); continue }
                    #expect(reason.contains("revoked"), "\(reason)")
                }
            } else {
                #expect(try await onlineVerifier.verify(jws, as: JWSTransaction.self).transactionID == "4400000000000001")
            }
            // Offline, as Apple's verifier without online checks: the responder is never asked.
            #expect(try await SignedDataVerifier(rootCertificates: roots).verify(jws, as: JWSTransaction.self).transactionID == "4400000000000001")
        }
        await responder.stop()
    }

    /// A responder that cannot be reached is no refusal (Apple's: only a signed "revoked" is).
    @Test func anUnreachableResponderIsNoRefusal() async throws {
        let responder = try await Responder()
        let url = responder.url
        await responder.stop()
        let authority = try Self.authority(ocspURL: url)
        let jws = try authority.signer.sign(payload: Self.transaction("4400000000000002"))
        let verifier = SignedDataVerifier(rootCertificates: [authority.root], online: Self.online())
        #expect(try await verifier.verify(jws, as: JWSTransaction.self).transactionID == "4400000000000002")
    }

    /// At the door: a notification signed by a revoked leaf is refused 401 `invalid_signature`,
    /// and `IAP_APPLE_ONLINE_CHECKS=on` is what turns the checks on.
    @Test func theIntakeRefusesANotificationOfARevokedLeaf() async throws {
        let responder = try await Responder()
        let authority = try Self.authority(ocspURL: responder.url)
        try responder.serve(authority, revoked: true)
        let redis = RedisClient(configuration: .init(endpoint: .tcp(host: "127.0.0.1", port: 1)), poolSize: 1)
        let store = PipelineStore(redis: redis, keys: RedisKeys(prefix: "iap"))
        let admission = NotificationAdmission(
            verifier: SignedDataVerifier(rootCertificates: [authority.root], online: Self.online()),
            bundleIDs: [PipelineHarness.bundleID], appAppleID: nil, store: store, ticketTTL: .seconds(60))
        let payload = NotificationPayload(
            notificationType: "TEST", notificationUUID: UUID().uuidString, signedDate: nil,
            data: .init(bundleID: PipelineHarness.bundleID, environment: "Production", signedTransactionInfo: nil))
        let signed = try authority.signer.sign(payload: payload)
        do {
            _ = try await admission.verify(signed, logger: testLogger)
            Issue.record("a notification of a revoked leaf was admitted")
        } catch {
            #expect(error.code == .invalidSignature && error.httpStatus == 401, "\(error)")
        }
        await redis.close()
        await responder.stop()

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("online-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rootFile = directory.appendingPathComponent("root.pem").path
        try authority.root.serializeAsPEM().pemString.write(toFile: rootFile, atomically: true, encoding: .utf8)
        for (value, online) in [("on", true), ("off", false)] {
            let configuration = try PipelineConfiguration(environment: [
                "IAP_BUNDLE_IDS": PipelineHarness.bundleID, "IAP_APPLE_ROOT_CERTS": rootFile, "IAP_APPLE_ONLINE_CHECKS": value,
            ])
            #expect((try NotificationAdmission.make(configuration, store: store)?.verifier.online != nil) == online)
        }
    }
}
