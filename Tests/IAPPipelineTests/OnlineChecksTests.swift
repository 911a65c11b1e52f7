import AppleJWS
import AppleSimulator
import AsyncHTTPClient
import Foundation
import Hummingbird
import PipelineCore
import IAPStages
import IAPOperations
import NIOCore
import PipelineTestSupport
import RedisClient
import Synchronization
import TestSupport
import Testing
import X509

/// `IAP_APPLE_ONLINE_CHECKS=on`, as Apple's `enableOnlineChecks`: a notification's chain is
/// validated now and its leaf's revocation status asked of the OCSP responder the leaf names (its
/// Authority Information Access, as Apple's leaves carry). The answers are OpenSSL's own
/// (`openssl ocsp -index`: revoked or good as its index says, signed by the leaf's issuer), made
/// before each check, so the check itself waits on nothing (swift-certificates gives an OCSP
/// check 10 s, then trusts the chain: a slow responder must not pass for a good one here).
@Suite(.serialized) struct OnlineChecksTests {
    /// apple-sim's hierarchy with its leaf naming `url` as its OCSP responder.
    static func authority(ocspURL url: String) throws -> SigningAuthority {
        var options = SigningAuthority.Options()
        options.ocspURL = url
        return try SigningAuthority(options: options)
    }

    /// OpenSSL's answer about `authority`'s leaf, revoked or good, signed by its issuer (to a
    /// request without a nonce: a responder may leave it out, and swift-certificates then takes
    /// the answer on its signature and times).
    static func openSSLAnswer(for authority: SigningAuthority, revoked: Bool) async throws -> [UInt8] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocsp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func file(_ name: String) -> String { folder.appendingPathComponent(name).path }
        try authority.intermediate.serializeAsPEM().pemString.write(toFile: file("issuer.pem"), atomically: true, encoding: .utf8)
        try authority.intermediateKey.pemRepresentation.write(toFile: file("issuer-key.pem"), atomically: true, encoding: .utf8)
        try authority.leaf.serializeAsPEM().pemString.write(toFile: file("leaf.pem"), atomically: true, encoding: .utf8)
        let serial = authority.leaf.serialNumber.bytes.map { String(format: "%02X", $0) }.joined()
        let line = revoked
            ? "R\t491231235959Z\t251126000000Z\t\(serial)\tunknown\t/CN=leaf\n" : "V\t491231235959Z\t\t\(serial)\tunknown\t/CN=leaf\n"
        try line.write(toFile: file("index.txt"), atomically: true, encoding: .utf8)
        try await openSSL(["ocsp", "-issuer", file("issuer.pem"), "-cert", file("leaf.pem"), "-no_nonce", "-reqout", file("request.der")])
        try await openSSL([
            "ocsp", "-index", file("index.txt"), "-CA", file("issuer.pem"), "-rsigner", file("issuer.pem"), "-rkey", file("issuer-key.pem"),
            "-ndays", "1", "-reqin", file("request.der"), "-respout", file("response.der"),
        ])
        return Array(try Data(contentsOf: URL(fileURLWithPath: file("response.der"))))
    }

    /// Runs `openssl` to its end, its exit awaited (never waited for on a thread of the test's pool).
    static func openSSL(_ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let (exits, exited) = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in exited.finish() }
        try process.run()
        for await _ in exits {}
        guard process.terminationStatus == 0 else { throw TestFailure("openssl \(arguments.prefix(2)) exited \(process.terminationStatus)") }
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A requester that answers `answer` in this process, and records where it was sent.
    static func requester(answering answer: [UInt8], asked: AskedURIs) -> SignedDataVerifier.OnlineChecks {
        .init(requester: AnyOCSPRequester { _, uri in
            asked.add(uri)
            return .response(answer)
        })
    }

    final class AskedURIs: Sendable {
        private let uris = Mutex<[String]>([])
        func add(_ uri: String) { uris.withLock { $0.append(uri) } }
        var all: [String] { uris.withLock { $0 } }
    }

    static func transaction(_ id: String) -> JWSTransaction {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return JWSTransaction(
            transactionID: id, bundleID: PipelineHarness.bundleID, productID: "gold.100", purchaseDate: now - 1000, type: "Consumable",
            signedDate: now, environment: "Production")
    }

    @Test func aLeafItsResponderSaysIsRevokedIsRefusedOnlineOnly() async throws {
        let url = "http://127.0.0.1:9/ocsp"
        for revoked in [true, false] {
            let authority = try Self.authority(ocspURL: url)
            let asked = AskedURIs()
            let online = Self.requester(answering: try await Self.openSSLAnswer(for: authority, revoked: revoked), asked: asked)
            let jws = try authority.signer.sign(payload: Self.transaction("4400000000000001"))
            let verifier = SignedDataVerifier(rootCertificates: [authority.root], online: online)
            if revoked {
                do {
                    _ = try await verifier.verify(jws, as: JWSTransaction.self)
                    Issue.record("a revoked leaf was trusted online")
                } catch {
                    guard case .untrustedChain(let reason) = error else {
                        Issue.record("\(error)")
                        continue
                    }
                    #expect(reason.contains("revoked"), "\(reason)")
                }
            } else {
                #expect(try await verifier.verify(jws, as: JWSTransaction.self).transactionID == "4400000000000001")
            }
            // The leaf's responder was asked (the intermediate names none).
            #expect(asked.all == [url], "\(asked.all)")
            // Offline, as Apple's verifier without online checks: no responder is asked.
            #expect(try await SignedDataVerifier(rootCertificates: [authority.root]).verify(jws, as: JWSTransaction.self).transactionID
                == "4400000000000001")
        }
    }

    /// A chain checked online is trusted for `cacheFor` from the verifier's clock, then checked
    /// anew, once: the new check takes the old one's place in the cache.
    @Test func aChainCheckedOnlineIsAskedAboutAgainOnceItsTimeIsUp() async throws {
        let url = "http://127.0.0.1:9/ocsp"
        let authority = try Self.authority(ocspURL: url)
        let asked = AskedURIs()
        let answer = try await Self.openSSLAnswer(for: authority, revoked: false)
        let clock = Mutex(Date())
        let online = SignedDataVerifier.OnlineChecks(
            requester: AnyOCSPRequester { _, uri in
                asked.add(uri)
                return .response(answer)
            },
            cacheFor: .seconds(900), now: { clock.withLock { $0 } })
        let verifier = SignedDataVerifier(rootCertificates: [authority.root], online: online)
        let jws = try authority.signer.sign(payload: Self.transaction("4400000000000002"))
        for _ in 0..<2 { _ = try await verifier.verify(jws, as: JWSTransaction.self) }
        #expect(asked.all.count == 1)
        clock.withLock { $0 = $0.addingTimeInterval(901) }
        for _ in 0..<2 { _ = try await verifier.verify(jws, as: JWSTransaction.self) }
        #expect(asked.all.count == 2)
    }

    /// The pipeline's transport: a POST of the DER request to the responder's URL brings back its
    /// answer as sent; a responder that is not there is a failure (which the check takes as no refusal).
    @Test func theHTTPRequesterFetchesTheRespondersAnswer() async throws {
        let answer = Array("a DER answer".utf8)
        let router = Router()
        router.post("/ocsp") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1024)
            guard request.headers[.contentType] == "application/ocsp-request", body.readableBytes == 3 else {
                return Response(status: .badRequest)
            }
            return Response(status: .ok, headers: [.contentType: "application/ocsp-response"], body: .init(byteBuffer: ByteBuffer(bytes: answer)))
        }
        let server = try await RunningServer.start { onRunning in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await onRunning($0.localAddress?.port ?? 0) }, logger: testLogger)
        }
        let fetched = await OCSPHTTPRequester.fetch([1, 2, 3], from: "http://127.0.0.1:\(server.port)/ocsp", timeout: .seconds(60))
        #expect((try? fetched.get()) == answer)
        let refused = await OCSPHTTPRequester.fetch([1, 2, 3], from: "http://127.0.0.1:\(server.port)/elsewhere", timeout: .seconds(60))
        #expect((try? refused.get()) == nil)
        await server.stop()
        // A client of its own: the shared one's pool may still hold a connection to the stopped server.
        let fresh = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let gone = await OCSPHTTPRequester.fetch([1, 2, 3], from: "http://127.0.0.1:\(server.port)/ocsp", timeout: .seconds(60), client: fresh)
        #expect((try? gone.get()) == nil)
        // A responder that cannot be reached is no refusal.
        let authority = try Self.authority(ocspURL: "http://127.0.0.1:\(server.port)/ocsp")
        let jws = try authority.signer.sign(payload: Self.transaction("4400000000000002"))
        let verifier = SignedDataVerifier(rootCertificates: [authority.root], online: .init(requester: OCSPHTTPRequester.make(client: fresh)))
        #expect(try await verifier.verify(jws, as: JWSTransaction.self).transactionID == "4400000000000002")
        try await fresh.shutdown()
    }

    /// At the door: a notification signed by a revoked leaf is refused 401 `invalid_signature`,
    /// and `IAP_APPLE_ONLINE_CHECKS=on` is what turns the checks on.
    @Test func theIntakeRefusesANotificationOfARevokedLeaf() async throws {
        let authority = try Self.authority(ocspURL: "http://127.0.0.1:9/ocsp")
        let online = Self.requester(answering: try await Self.openSSLAnswer(for: authority, revoked: true), asked: AskedURIs())
        let redis = RedisClient(configuration: .init(endpoint: .tcp(host: "127.0.0.1", port: 1)), poolSize: 1)
        let store = PipelineStore(redis: redis, keys: RedisKeys(prefix: "iap"))
        let admission = NotificationAdmission(
            verifier: SignedDataVerifier(rootCertificates: [authority.root], online: online),
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

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("online-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rootFile = directory.appendingPathComponent("root.pem").path
        try authority.root.serializeAsPEM().pemString.write(toFile: rootFile, atomically: true, encoding: .utf8)
        for (value, isOnline) in [("on", true), ("off", false)] {
            let configuration = try PipelineConfiguration(environment: [
                "IAP_BUNDLE_IDS": PipelineHarness.bundleID, "IAP_APPLE_ROOT_CERTS": rootFile, "IAP_APPLE_ONLINE_CHECKS": value,
            ])
            #expect((try NotificationAdmission.make(configuration, store: store)?.verifier.online != nil) == isOnline)
        }
    }
}
