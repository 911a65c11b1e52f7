import Foundation
import IAPClient
import PipelineTestSupport
import Testing

/// Who may read the business's figures.
@Suite(.serialized) struct ReportAccessTests {
    /// With client keys, a report is read only with a key scoped `reports`: a game backend's key
    /// (a bare secret) is refused `forbidden_scope`, an unsigned caller `401`, both as `//v1/reports/…` too.
    @Test func aReportNeedsAKeyScopedReports() async throws {
        let finance = (id: "finance", secret: "finance-secret-0123456789abcdef")
        let backend = (id: "backend-1", secret: "0123456789abcdef-backend-secret")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("client-keys-\(UUID().uuidString).json")
        try #"""
            {"\#(backend.id)": "\#(backend.secret)", "\#(finance.id)": {"secret": "\#(finance.secret)", "scopes": ["reports"]}}
            """#.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withPipeline(startWorkers: false, environment: ["IAP_CLIENT_KEYS_FILE": file.path]) { pipeline in
            let path = "/v1/reports/revenue?from=2026-11-01&to=2026-11-30"
            func get(_ key: (id: String, secret: String)) async throws -> PipelineHarness.Reply {
                try await pipeline.get(path, headers: RequestSigner(keyID: key.id, secret: key.secret).headers(
                    method: "GET", target: path, body: Data(), timestamp: Int64(Date().timeIntervalSince1970)))
            }
            #expect(try await get(finance).status == 200)
            let refused = try await get(backend)
            #expect(refused.status == 403 && (refused.json["error"] as? [String: Any])?["code"] as? String == "forbidden_scope")
            #expect(try await pipeline.get(path).status == 401)
            #expect(try await pipeline.get("/" + path).status == 400)
        }
    }
}
