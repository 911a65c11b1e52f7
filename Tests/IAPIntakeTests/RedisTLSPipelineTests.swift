import Foundation
import IAPSettings
import IAPStages
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// The whole pipeline over `rediss://` (`IAP_REDIS_TLS_CA_FILE`): a Redis our CA signed takes the
/// receipts end to end; one it did not sign is never talked to (`/readyz` not ready, `503`).
@Suite(.serialized) struct RedisTLSPipelineTests {
    @Test func aRedisOurCASignedCarriesThePipeline() async throws {
        let certificates = try TestCertificates()
        defer { certificates.remove() }
        let server = try await RedisServer.start(tls: certificates)
        defer { server.stop() }
        try await withPipeline(environment: ["IAP_REDIS_URL": server.url, "IAP_REDIS_TLS_CA_FILE": certificates.caFile]) { pipeline in
            #expect(try await pipeline.get("/readyz").status == 200)
            let ticket = try await pipeline.submit(receipt([gold("tls-1")]))
            #expect(try await pipeline.terminal(ticket).status == .granted)
        }
    }

    @Test func aRedisOurCADidNotSignIsNeverTalkedTo() async throws {
        let certificates = try TestCertificates()
        let stranger = try TestCertificates(name: "Some Other Root")
        defer {
            certificates.remove()
            stranger.remove()
        }
        let server = try await RedisServer.start(tls: certificates)
        defer { server.stop() }
        try await withPipeline(startWorkers: false, environment: ["IAP_REDIS_URL": server.url, "IAP_REDIS_TLS_CA_FILE": stranger.caFile]) {
            pipeline in
            let ready = try await pipeline.get("/readyz")
            #expect(ready.status == 503, "\(ready.json)")
            let refused = try await pipeline.post(["receipt_data": receipt([gold("tls-2")]).receiptData(), "user_id": "player-1"])
            #expect(refused.status == 503 && (refused.json["error"] as? [String: Any])?["code"] as? String == "redis_unavailable")
        }
        var trusted = try RedisConfiguration(url: server.url)
        trusted.tls = .init(caFile: certificates.caFile)
        let client = RedisClient(configuration: trusted, poolSize: 1)
        #expect(try await client.send("DBSIZE").int == 0)
        await client.close()
    }

    @Test func theTLSFilesAreCheckedAtStart() throws {
        #expect(throws: ConfigurationError.self) {
            try PipelineConfiguration(environment: ["IAP_REDIS_URL": "rediss://127.0.0.1", "IAP_REDIS_TLS_CA_FILE": "/nonexistent/ca.pem"])
        }
        do {
            _ = try PipelineConfiguration(environment: ["IAP_REDIS_URL": "redis://127.0.0.1", "IAP_REDIS_TLS_CA_FILE": "/etc/ssl/ca.pem"])
            Issue.record("a CA file with a plain redis:// URL was accepted")
        } catch {
            #expect(error.variable == "IAP_REDIS_TLS_CA_FILE" && error.problem.contains("rediss://"))
        }
    }
}
