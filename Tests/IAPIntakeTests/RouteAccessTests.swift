import Foundation
import Hummingbird
import IAPClient
@testable import IAPIntake
import IAPStages
import PipelineTestSupport
import TestSupport
import Testing

/// Who gets in is decided by the route the router matched, denied by default, and only for a path
/// spelled one way: every route of the intake, under every other spelling, unsigned, is refused
/// before its handler and stores nothing.
@Suite(.serialized) struct RouteAccessTests {
    static let keyID = "backend-1"
    static let secret = "0123456789abcdef-backend-secret"

    @Test func aPathIsCanonicalOnlyWhenSpelledOneWay() {
        let canonical = [
            "/", "/healthz", "/v1/receipts", "/v1/receipts/AAAAAAAAAAAAAAAAAAAAAA", "/v1/users/a%20b/consent",
            "/v1/users/a%40b%3A1/entitlements", "/v1/users/back%5Cslash/consent",
        ]
        for path in canonical { #expect(CanonicalPath.problem(in: path) == nil, "\(path)") }
        let refused = [
            "", "v1/receipts", "//v1/receipts", "/v1//receipts", "/v1/receipts/", "/v1/./receipts", "/v1/../v1/receipts",
            "/./v1/receipts", "/v1/%2e/receipts", "/v1/%2E%2E/receipts", "/v1%2Freceipts", "/v1%2freceipts", "/%761/receipts",
            "/v1/users/u%31/consent", "/v1/users/u%7E/consent", "/v1/users/u%5f/consent", "/v1/users/u%/consent",
            "/v1/users/u%4/consent", "/v1/users/u%zz/consent", "/v1\\receipts", "/v1/users/\u{e9}/consent",
            "/v1/users/a b/consent", "/v1/users/a\u{7f}/consent",
        ]
        for path in refused { #expect(CanonicalPath.problem(in: path) != nil, "\(path.debugDescription)") }
    }

    /// Every route the intake registers (read from its router, with its metrics and its client
    /// keys, as deployed) is on the open list or in a guarded room; anything else is refused.
    @Test func everyRouteIsGuardedOrOnTheOpenList() async throws {
        try await withKeys { pipeline in
            let routes = try Self.router(pipeline).routes
            #expect(routes.count >= 13, "\(routes)")
            for route in routes {
                let access = RouteAccess.of(route: route.path.description)
                #expect(access != nil, "\(route) is neither guarded nor on the open list")
            }
            let open = Set(routes.map(\.path.description).filter { RouteAccess.of(route: $0) == .open })
            // With client keys, /metrics is not on the intake's port (its own listener serves it).
            #expect(open == RouteAccess.openRoutes.subtracting(["/metrics"]), "open routes: \(open.sorted())")
            #expect(try await pipeline.get("/metrics").status == 404)
            #expect(RouteAccess.of(route: "/v1/admin/purge") == nil)
            #expect(RouteAccess.of(route: "/admin") == nil)
        }
    }

    /// A route added without a line in `RouteAccess` answers `403 route_not_classified`, signed or not.
    @Test func aRouteOnNoListIsRefused() async throws {
        let router = Router(context: IntakeRequestContext.self)
        router.add(middleware: RouteAccessMiddleware(authenticator: nil))
        router.get("/v1/admin/purge") { _, _ in "purged" }
        let server = try await RunningServer.start { onRunning in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await onRunning($0.localAddress?.port ?? 0) }, logger: testLogger)
        }
        defer { Task { await server.stop() } }
        let answer = try await RawHTTP.send(port: server.port, method: "GET", target: "/v1/admin/purge")
        #expect(answer.status == 403 && answer.text.contains("route_not_classified"), "\(answer.text)")
        await server.stop()
    }

    /// The review's attack (`//v1/…`) and every other spelling, on every route, unsigned: each is
    /// `400 bad_path`; the plain spelling of a guarded route is `401`; nothing is stored.
    @Test func everyRouteUnderEverySpellingRefusesAnUnsignedCallerAndStoresNothing() async throws {
        try await withKeys { pipeline in
            let routes = try Self.router(pipeline).routes
            for route in routes {
                let path = Self.sample(route.path.description)
                let body = Array(Self.body(for: path).utf8)
                let method = route.method.rawValue
                let headers = [("Content-Type", "application/json")]
                let plain = try await RawHTTP.send(port: pipeline.intake.port, method: method, target: path, headers: headers, body: body)
                if RouteAccess.of(route: route.path.description) == .open {
                    #expect(plain.status != 401 && plain.status != 403, "\(method) \(path): \(plain.text)")
                } else {
                    #expect(plain.status == 401 && plain.text.contains("unauthenticated"), "\(method) \(path): \(plain.text)")
                }
                for spelling in Self.spellings(of: path) {
                    let answer = try await RawHTTP.send(
                        port: pipeline.intake.port, method: method, target: spelling, headers: headers, body: body)
                    #expect(answer.status == 400 && answer.text.contains("bad_path"), "\(method) \(spelling): \(answer.text)")
                }
            }
            #expect(try await pipeline.storedKeys() == [])
        }
    }

    /// A request correctly signed for `//v1/receipts` is still refused: the spelling, not the
    /// signature, is at fault. The plain spelling, signed, is taken.
    @Test func aSignedRequestToAnotherSpellingIsRefusedToo() async throws {
        try await withKeys { pipeline in
            let body = Array(Self.body(for: "/v1/receipts").utf8)
            let signer = RequestSigner(keyID: Self.keyID, secret: Self.secret)
            for target in ["//v1/receipts", "/v1/receipts/", "/v1/%72eceipts"] {
                let headers = signer.headers(method: "POST", target: target, body: body, timestamp: Int64(Date().timeIntervalSince1970)) + [("Content-Type", "application/json")]
                let answer = try await RawHTTP.send(port: pipeline.intake.port, method: "POST", target: target, headers: headers, body: body)
                #expect(answer.status == 400 && answer.text.contains("bad_path"), "\(target): \(answer.text)")
            }
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 0)
            let headers = signer.headers(method: "POST", target: "/v1/receipts", body: body, timestamp: Int64(Date().timeIntervalSince1970)) + [("Content-Type", "application/json")]
            let taken = try await RawHTTP.send(port: pipeline.intake.port, method: "POST", target: "/v1/receipts", headers: headers, body: body)
            #expect(taken.status == 202, "\(taken.text)")
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 1)
        }
    }

    /// An intake without client keys serves its guarded routes to anyone (and says so at start),
    /// but still only under their one spelling.
    @Test func anOpenIntakeRefusesOtherSpellingsToo() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let body = Array(Self.body(for: "/v1/users/u1/consent").utf8)
            for target in ["//v1/users/u1/consent", "/v1/users//u1/consent", "/v1/users/u1/./consent"] {
                let answer = try await RawHTTP.send(
                    port: pipeline.intake.port, method: "PUT", target: target, headers: [("Content-Type", "application/json")], body: body)
                #expect(answer.status == 400 && answer.text.contains("bad_path"), "\(target): \(answer.text)")
            }
            #expect(try await pipeline.storedKeys() == [])
        }
    }

    // MARK: - Helpers

    private func withKeys(_ body: (PipelineHarness) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("route-access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("client-keys.json")
        try #"{"\#(Self.keyID)": "\#(Self.secret)", "desk": {"secret": "desk-0123456789abcdef", "scopes": ["support"]}}"#
            .write(to: keys, atomically: true, encoding: .utf8)
        let catalog = directory.appendingPathComponent("products.json")
        try PipelineHarness.catalogJSON.write(to: catalog, atomically: true, encoding: .utf8)
        try await withPipeline(
            startWorkers: false, serverAPI: true, environment: ["IAP_CLIENT_KEYS_FILE": keys.path, "IAP_PRODUCTS_FILE": catalog.path]
        ) { pipeline in try await body(pipeline) }
    }

    /// The intake's router as the harness serves it.
    static func router(_ pipeline: PipelineHarness) throws -> Router<IntakeRequestContext> {
        try IntakeApplication.routes(
            store: pipeline.store, configuration: pipeline.configuration, notifications: nil, clientKeys: pipeline.clientKeys,
            waiters: pipeline.waiters, metrics: .init(text: { [] }))
    }

    /// A route template with a value in each parameter.
    static func sample(_ template: String) -> String {
        template.replacingOccurrences(of: "{ticket}", with: "AAAAAAAAAAAAAAAAAAAAAA")
            .replacingOccurrences(of: "{user_id}", with: "victim")
            .replacingOccurrences(of: "{transaction_id}", with: "2000000001")
            .replacingOccurrences(of: "{order_id}", with: "MQ2RV4KQ7Z")
            .replacingOccurrences(of: "{report}", with: "revenue")
            .replacingOccurrences(of: "{grant_id}", with: "comp-1")
    }

    /// A body the route's handler would take (so a request that got through would write).
    static func body(for path: String) -> String {
        if path.hasSuffix("/consent") { return #"{"consented": true}"# }
        if path.hasSuffix("/grants") { return #"{"grant_id": "comp-1", "entitlement": "premium", "duration_s": 3600, "reason": "x"}"# }
        if path.hasSuffix("/consumption") { return #"{"delivery_status": "UNDELIVERED_OTHER"}"# }
        if path.hasSuffix("/app-account-token") { return #"{"app_account_token": "\#(UUID().uuidString)"}"# }
        if path.hasPrefix("/v1/offers") { return #"{"user_id": "victim", "product_id": "vip.monthly", "kind": "promotional", "offer_id": "anyone"}"# }
        if path == "/v1/receipts" {
            return String(decoding: try! JSONSerialization.data(withJSONObject: [
                "receipt_data": receipt([gold("route-access-1")]).receiptData(), "user_id": "victim",
            ]), as: UTF8.self)
        }
        return ""
    }

    /// Every other spelling of `path` that a router or a proxy might read as it.
    static func spellings(of path: String) -> [String] {
        let segments = path.split(separator: "/").map(String.init)
        func join(_ parts: [String]) -> String { "/" + parts.joined(separator: "/") }
        func encoded(_ character: Character, lowercase: Bool) -> String {
            let hex = String(character.asciiValue!, radix: 16, uppercase: !lowercase)
            return "%" + (hex.count == 1 ? "0" + hex : hex)
        }
        let first = segments[0]
        let last = segments[segments.count - 1]
        var spellings = [
            "/" + path,
            path + "/",
            join([first, "."] + segments.dropFirst()),
            join([first, "x", ".."] + segments.dropFirst()),
            join([first, "%2e"] + segments.dropFirst()),
            "/./" + path.dropFirst(),
            join([encoded(first.first!, lowercase: false) + first.dropFirst()] + segments.dropFirst()),
            join(segments.dropLast() + [last.dropLast() + encoded(last.last!, lowercase: true)]),
        ]
        if segments.count >= 2 {
            let rest = segments.dropFirst().joined(separator: "/")
            spellings += ["/" + first + "//" + rest, "/" + first + "%2F" + rest, "/" + first + "\\" + rest]
        }
        return spellings
    }
}
