import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdBcrypt
import NIOHTTP1
import IAPConsole
import IAPOperations
import Logging
import LoopbackPort
import PipelineTestSupport
import PlainJSON
import RedisClient
import TestSupport
import Testing

/// `iap-console` on a free port beside a running pipeline, written once for every console suite:
/// five users, one of each role (vera a viewer, sam support, oscar an operator, ada an admin, fay finance),
/// all with `password`.
enum ConsoleHarness {
    static let password = "correct horse battery staple"

    /// The console itself and what a test talks to it with.
    struct Console {
        let server: RunningServer
        /// Redirects are the answers under test: not followed.
        let http: HTTPClient
        let users: ConsoleUsers
        let usersFile: URL
        var base: String { server.baseURL }

        struct Reply {
            var status: Int
            var headers: [String: String]
            var body: String
        }

        func send(
            _ method: HTTPMethod, _ path: String, form: String? = nil, cookie: String? = nil,
            headers: [(String, String)] = [("Sec-Fetch-Site", "same-origin")]
        ) async throws -> Reply {
            var request = HTTPClientRequest(url: base + path)
            request.method = method
            if let cookie { request.headers.add(name: "Cookie", value: "iap_console=\(cookie)") }
            request.headers.add(contentsOf: headers)
            if let form {
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(string: form))
            }
            let response = try await http.execute(request, timeout: .seconds(20))
            let body = try await response.body.collect(upTo: 4 << 20)
            var fields: [String: String] = [:]
            for header in response.headers { fields[header.name.lowercased()] = header.value }
            return Reply(status: Int(response.status.code), headers: fields, body: String(buffer: body))
        }

        /// Signs in and returns the session cookie's value.
        func signIn(_ name: String) async throws -> String {
            let reply = try await send(.POST, "/login", form: "username=\(name)&password=\(ConsoleHarness.password.replacingOccurrences(of: " ", with: "+"))")
            #expect(reply.status == 303 && reply.headers["location"] == "/", "\(reply.status) \(reply.body)")
            let cookie: String = try #require(reply.headers["set-cookie"])
            let pair = cookie.split(separator: ";").first ?? ""
            return String(pair.split(separator: "=", maxSplits: 1).last ?? "")
        }
    }

    static func usersJSON(_ users: [String: String]) -> String {
        let hash = Bcrypt.hash(password, cost: 4)
        return JSONValue.object(users.mapValues { role in .object(["password_hash": .string(hash), "role": .string(role)]) }).canonicalText
    }

    static func withConsole(
        redis: RedisClient? = nil, maxAttempts: Int = 4, startWorkers: Bool = true, secureCookie: Bool = false, serverAPI: Bool = false,
        environment: [String: String] = [:],
        _ body: (PipelineHarness, Console) async throws -> Void
    ) async throws {
        try await withPipeline(maxAttempts: maxAttempts, startWorkers: startWorkers, serverAPI: serverAPI, environment: environment) { pipeline in
            // Support's look-up at Apple (apple-sim) when the pipeline has a Server API key.
            // The stages' catalog is the harness's own (no IAP_PRODUCTS_FILE), as the intake's is.
            let support = try SupportLookup.make(pipeline.configuration, store: pipeline.store, logger: Logger(label: "console-test")).map {
                SupportLookup(store: $0.store, catalog: PipelineHarness.catalog, clients: $0.clients, signedData: $0.signedData)
            }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("console-users-\(UUID().uuidString).json")
            try Self.usersJSON(["vera": "viewer", "sam": "support", "oscar": "operator", "ada": "admin", "fay": "finance"]).write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let users = try ConsoleUsers(file: file.path)
            let sessions = ConsoleSessions(redis: redis ?? pipeline.redis, keys: pipeline.store.keys, lifetime: .seconds(600))
            let port = try LoopbackPort.free()
            let console = try ConsoleApplication(
                store: pipeline.store, sessions: sessions, users: users, lease: .seconds(30), ticketTTL: .seconds(3600), origins: ["http://127.0.0.1:\(port)"],
                secureCookie: secureCookie, support: support, dailyLimits: PipelineHarness.catalog.dailyLimits,
                catalog: PipelineHarness.catalog)
            let server = try await RunningServer.start { onRunning in
                Application(
                    router: console.router(), configuration: .init(address: .hostname("127.0.0.1", port: port)),
                    onServerRunning: { await onRunning($0.localAddress?.port ?? 0) })
            }
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            do {
                try await body(pipeline, Console(server: server, http: http, users: users, usersFile: file))
            } catch {
                try? await http.shutdown()
                await server.stop()
                await support?.shutdown()
                throw error
            }
            try? await http.shutdown()
            await server.stop()
            await support?.shutdown()
        }
    }

}
