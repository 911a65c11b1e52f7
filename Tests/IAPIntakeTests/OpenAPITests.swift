@preconcurrency import Crypto
import Foundation
import IAPIntake
import IAPStages
import PipelineTestSupport
import TestSupport
import Testing

/// The API as a document: `/openapi.json` serves the repository's OpenAPI 3.1 document, it names
/// every route, and schemathesis (from PyPI, which `workers/test` installs) finds no server error
/// and no answer that breaks it over the cases it generates against a live intake.
@Suite(.serialized) struct OpenAPITests {
    /// The document's operations, as `METHOD /path`.
    static func documented() throws -> Set<String> {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        return Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
    }

    /// The document names exactly the routes the intake registers (read from its router, not
    /// copied into this test), and `/openapi.json` serves the file.
    @Test func theDocumentIsServedAndNamesEveryRoute() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let waiters = TicketWaiters(redis: pipeline.configuration.redis.connection, keys: pipeline.store.keys, logger: testLogger)
            let router = try IntakeApplication.routes(
                store: pipeline.store, configuration: pipeline.configuration, notifications: nil, clientKeys: nil,
                waiters: waiters, metrics: .init(text: { [] }))
            let registered = Set(router.routes.map { "\($0.method.rawValue) \($0.path.description)" })
            #expect(registered.count >= 10, "\(registered)")
            #expect(try Self.documented() == registered)

            let reply = try await pipeline.get("/openapi.json")
            #expect(reply.status == 200 && reply.json["openapi"] as? String == "3.1.0")
            let served = try #require(reply.json["paths"] as? [String: Any])
            let file = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
            #expect(Set(served.keys) == Set((file["paths"] as? [String: Any] ?? [:]).keys))
        }
    }

    /// Shared parts are written once: the user id parameter is a `$ref`, never inlined.
    @Test func sharedParametersAreReferences() throws {
        // One reference per operation on a user's path.
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let operations = paths.filter { $0.key.contains("{user_id}") }.map(\.value.count).reduce(0, +)
        #expect(operations >= 5)
        #expect(OpenAPIDocument.json.components(separatedBy: "\"#/components/parameters/UserID\"").count - 1 == operations)
        #expect(OpenAPIDocument.json.components(separatedBy: "The game's user id").count - 1 == 1)
    }

    static var schemathesis: String? {
        if let given = ProcessInfo.processInfo.environment["SCHEMATHESIS_BIN"], FileManager.default.isExecutableFile(atPath: given) {
            return given
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let home = ProcessInfo.processInfo.environment["HOME"] ?? "/root"
        let folders = path.split(separator: ":").map(String.init) + ["\(home)/.local/bin", "/usr/local/bin"]
        return folders.map { "\($0)/schemathesis" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func schemathesisFindsNoServerErrorAndNoSchemaViolation() async throws {
        let tool = try #require(Self.schemathesis, "schemathesis is not installed: workers/test installs it (pip install schemathesis)")
        // The intake with its catalog, as deployed: every route answers.
        let catalog = FileManager.default.temporaryDirectory.appendingPathComponent("products-\(UUID().uuidString).json")
        try PipelineHarness.catalogJSON.write(to: catalog, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: catalog) }
        // And an In-App Purchase key, so offers are signed (the Server API key gives their issuer).
        let offerKey = FileManager.default.temporaryDirectory.appendingPathComponent("offer-key-\(UUID().uuidString).p8")
        try P256.Signing.PrivateKey().pemRepresentation.write(to: offerKey, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: offerKey) }
        try await withPipeline(serverAPI: true, environment: [
            "IAP_PRODUCTS_FILE": catalog.path, "IAP_OFFER_KEY_ID": "OFFERKEY01", "IAP_OFFER_PRIVATE_KEY_FILE": offerKey.path,
        ]) { pipeline in
            let (status, text) = try await runTool(tool, [
                "run", pipeline.intake.baseURL + "/openapi.json", "--url", pipeline.intake.baseURL,
                "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance",
                "--max-examples", ProcessInfo.processInfo.environment["IAP_SCHEMATHESIS_EXAMPLES"] ?? "40",
                "--request-timeout", "40", "--generation-deterministic", "--no-color",
            ], environment: ["SCHEMATHESIS_TELEMETRY": "false"])
            // The run's size, for the record (`IAP_SCHEMATHESIS_EXAMPLES` makes it longer).
            for line in text.split(separator: "\n") where line.contains("generated") { print("schemathesis: \(line)") }
            #expect(status == 0, "schemathesis failed:\n\(text.suffix(6000))")
            #expect(text.contains("passed") || text.contains("Passed"), "\(text.suffix(2000))")
        }
    }
}
