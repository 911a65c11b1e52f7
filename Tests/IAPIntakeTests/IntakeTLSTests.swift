import AsyncHTTPClient
import Foundation
import HummingbirdTLS
import IAPIntake
import IAPSettings
import IAPStages
import NIOCore
import NIOFoundationCompat
import PipelineTestSupport
import TestSupport
import Testing

/// `IAP_TLS_CERT_FILE` and `IAP_TLS_KEY_FILE`: the intake speaks HTTPS itself, over real TLS on
/// loopback, to a client that verifies its certificate.
@Suite(.serialized) struct IntakeTLSTests {
    private func client(trusting rootPEM: String?) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let rootPEM { tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(rootPEM.utf8), format: .pem)]) }
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
    }

    @Test func theIntakeAcceptsAReceiptOverHTTPSAndAClientThatDoesNotTrustItRefusesIt() async throws {
        let certificate = try TestCertificates(name: "IAP Pipeline Test TLS Root")
        defer { certificate.remove() }
        try await withPipeline(
            startWorkers: false, environment: ["IAP_TLS_CERT_FILE": certificate.certificateFile, "IAP_TLS_KEY_FILE": certificate.keyFile]
        ) { pipeline in
            let url = "https://localhost:\(pipeline.intake.port)/v1/receipts"
            func post(_ client: HTTPClient, timeout: TimeAmount = .seconds(10)) async throws -> HTTPClientResponse {
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.headers.add(name: "content-type", value: "application/json")
                let body = ["receipt_data": receipt([gold("tls-1")]).receiptData(), "user_id": "player-1"]
                request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: body)))
                return try await client.execute(request, timeout: timeout)
            }
            let trusting = try client(trusting: try String(contentsOfFile: certificate.caFile, encoding: .utf8))
            let accepted = try await post(trusting)
            #expect(accepted.status == .accepted)
            try await trusting.shutdown()

            // Verification stays on: a client with only the system's roots refuses the certificate.
            let stranger = try client(trusting: nil)
            // (The pool retries the handshake until the deadline, then reports why it failed: given
            // room for a first handshake on a loaded machine, 2 s was seen to end before one did.)
            let refusal = await #expect(throws: (any Error).self) { _ = try await post(stranger, timeout: .seconds(10)) }
            #expect(String(describing: refusal).contains("CERTIFICATE_VERIFY_FAILED"), "\(String(describing: refusal))")
            try await stranger.shutdown()

            // Plain HTTP to the TLS port gets no answer a client could take for one.
            let plainClient = HTTPClient(eventLoopGroupProvider: .singleton)
            let plain = try? await plainClient.execute(HTTPClientRequest(url: pipeline.intake.baseURL + "/healthz"), timeout: .seconds(2))
            #expect(plain?.status != .ok)
            try await plainClient.shutdown()
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 1)
        }
    }

    @Test func aCertificateWithoutItsKeyOrAFileThatIsNoPEMIsAConfigurationError() throws {
        let certificate = try TestCertificates(name: "IAP Pipeline Test TLS Root")
        defer { certificate.remove() }
        #expect(throws: ConfigurationError("IAP_TLS_KEY_FILE", "required with the other (the intake's TLS certificate and key)")) {
            _ = try PipelineConfiguration(environment: ["IAP_TLS_CERT_FILE": certificate.certificateFile])
        }
        let swapped = try PipelineConfiguration(
            environment: ["IAP_TLS_CERT_FILE": certificate.keyFile, "IAP_TLS_KEY_FILE": certificate.certificateFile])
        do {
            _ = try IntakeApplication.tlsConfiguration(swapped)
            Issue.record("a key file was taken for a certificate")
        } catch {
            #expect(error.variable == "IAP_TLS_CERT_FILE" || error.variable == "IAP_TLS_KEY_FILE", "\(error)")
        }
        #expect(try IntakeApplication.tlsConfiguration(try PipelineConfiguration(environment: [:])) == nil)
    }
}
