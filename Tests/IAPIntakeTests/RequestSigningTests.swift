import Foundation
import IAPClient
import IAPIntake
import IAPSettings
import PipelineTestSupport
import Testing

/// `IAP_CLIENT_KEYS_FILE`: only a game backend holding a key may call `/v1/receipts*` and
/// `/v1/users/*`; every refusal is a 401 with its code, and nothing is queued.
@Suite(.serialized) struct RequestSigningTests {
    static let keyID = "backend-1"
    static let secret = "0123456789abcdef-backend-secret"

    /// A keys file with one key, and the pipeline's intake checking it.
    private func withSigningPipeline(_ body: (PipelineHarness, URL) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("client-keys-\(UUID().uuidString).json")
        try #"{"\#(Self.keyID)": "\#(Self.secret)"}"#.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withPipeline(startWorkers: false, environment: ["IAP_CLIENT_KEYS_FILE": file.path]) { pipeline in
            try await body(pipeline, file)
        }
    }

    /// The three headers for `method target body`, signed with `secret` at `timestamp`.
    static func headers(
        _ method: String, _ target: String, _ body: Data = Data(), keyID: String = keyID, secret: String = secret,
        timestamp: Int64 = Int64(Date().timeIntervalSince1970)
    ) -> [(String, String)] {
        RequestSigner(keyID: keyID, secret: secret).headers(method: method, target: target, body: body, timestamp: timestamp)
    }

    static func receiptBody(_ id: String) throws -> Data {
        try JSONSerialization.data(withJSONObject: ["receipt_data": receipt([gold(id)]).receiptData(), "user_id": "player-1"])
    }

    @Test func aSignedSubmissionIsAcceptedAndItsTicketReadWithASignedGet() async throws {
        try await withSigningPipeline { pipeline, _ in
            let body = try Self.receiptBody("s1")
            let reply = try await pipeline.post(raw: body, headers: Self.headers("POST", "/v1/receipts", body))
            #expect(reply.status == 202)
            let ticket = try #require(reply.json["ticket"] as? String)
            let read = try await pipeline.get("/v1/receipts/\(ticket)", headers: Self.headers("GET", "/v1/receipts/\(ticket)"))
            #expect(read.status == 200 && read.json["ticket"] as? String == ticket)
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 1)
        }
    }

    @Test func anUnsignedOrForgedRequestIsRefusedAndNothingIsQueued() async throws {
        try await withSigningPipeline { pipeline, _ in
            let body = try Self.receiptBody("f1")
            var altered = body
            altered[altered.count - 3] ^= 0x01  // one byte of the body changed after signing
            let now = Int64(Date().timeIntervalSince1970)
            let cases: [(String, Data, [(String, String)], String)] = [
                ("no headers", body, [], "unauthenticated"),
                ("no signature", body, Array(Self.headers("POST", "/v1/receipts", body).prefix(2)), "unauthenticated"),
                ("unknown key", body, Self.headers("POST", "/v1/receipts", body, keyID: "someone"), "unauthenticated"),
                ("another secret", body, Self.headers("POST", "/v1/receipts", body, secret: "another-secret-0123456789"), "bad_signature"),
                ("a body changed by one byte", altered, Self.headers("POST", "/v1/receipts", body), "bad_signature"),
                ("signed for another target", body, Self.headers("POST", "/v1/receipts?x=1", body), "bad_signature"),
                ("signed for another method", body, Self.headers("PUT", "/v1/receipts", body), "bad_signature"),
                ("a signature that is not hex", body, Self.headers("POST", "/v1/receipts", body).prefix(2) + [("X-IAP-Signature", "zz")], "bad_signature"),
                // An hour off, not just past the 300 s allowed: on a loaded machine the cases are
                // sent long after `now` was read, and "310 s ahead" had come within the window.
                ("an hour old", body, Self.headers("POST", "/v1/receipts", body, timestamp: now - 3600), "stale_request"),
                ("an hour ahead", body, Self.headers("POST", "/v1/receipts", body, timestamp: now + 3600), "stale_request"),
                ("a timestamp in ms", body, Self.headers("POST", "/v1/receipts", body, timestamp: now * 1000), "stale_request"),
                ("a timestamp that is no number", body, Self.headers("POST", "/v1/receipts", body).prefix(1) + [("X-IAP-Timestamp", "soon")] + Self.headers("POST", "/v1/receipts", body).suffix(1), "stale_request"),
            ]
            for (what, sent, headers, code) in cases {
                let reply = try await pipeline.post(raw: sent, headers: headers)
                #expect(reply.status == 401, "\(what)")
                #expect((reply.json["error"] as? [String: Any])?["code"] as? String == code, "\(what): \(reply.json)")
            }
            // The other guarded routes too.
            let read = try await pipeline.get("/v1/receipts/AAAAAAAAAAAAAAAAAAAAAA")
            #expect(read.status == 401)
            let bind = try await pipeline.post(
                raw: Data(#"{"app_account_token": "\#(UUID().uuidString)"}"#.utf8), path: "/v1/users/player-1/app-account-token",
                method: .PUT)
            #expect(bind.status == 401)
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 0)
        }
    }

    /// The same signed request twice is a replay; the backend signs a resend anew and gets its
    /// ticket back.
    @Test func aReplayedSignatureIsRefusedAndAFreshlySignedResendGetsTheSameTicket() async throws {
        try await withSigningPipeline { pipeline, _ in
            let body = try Self.receiptBody("r1")
            let signedAt = Int64(Date().timeIntervalSince1970)
            let headers = Self.headers("POST", "/v1/receipts", body, timestamp: signedAt)
            let first = try await pipeline.post(raw: body, headers: headers)
            #expect(first.status == 202)
            let replay = try await pipeline.post(raw: body, headers: headers)
            #expect(replay.status == 401)
            #expect((replay.json["error"] as? [String: Any])?["code"] as? String == "replayed_request")
            // Signed anew with a later timestamp than the first (the same second would be the same signature).
            let resend = try await pipeline.post(raw: body, headers: Self.headers("POST", "/v1/receipts", body, timestamp: signedAt + 1))
            #expect(resend.status == 200 && resend.json["ticket"] as? String == first.json["ticket"] as? String)
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 1)
        }
    }

    /// A request answered 503 did nothing: the same signed request again is a retry, not a replay
    /// (here the intake cannot have the receipt replicated: one replica asked for, none there).
    @Test func aRequestAnswered503CanBeRetriedWithTheSameSignature() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("client-keys-\(UUID().uuidString).json")
        try #"{"\#(Self.keyID)": "\#(Self.secret)"}"#.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withPipeline(
            startWorkers: false,
            environment: ["IAP_CLIENT_KEYS_FILE": file.path, "IAP_REDIS_MIN_REPLICAS": "1", "IAP_REDIS_REPLICA_TIMEOUT_MS": "50"]
        ) { pipeline in
            let body = try Self.receiptBody("503")
            let headers = Self.headers("POST", "/v1/receipts", body)
            for _ in 0..<2 {
                let reply = try await pipeline.post(raw: body, headers: headers)
                #expect(reply.status == 503)
                #expect((reply.json["error"] as? [String: Any])?["code"] as? String == "not_replicated")
            }
        }
    }

    /// `IAP_RATE_PER_KEY=1`: a burst of new receipts from one backend is mostly refused with 429
    /// and `Retry-After`, nothing of it queued; a resend of an accepted receipt is answered anyway.
    @Test func aBurstOverTheRatePerKeyIsRefusedWith429() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("client-keys-\(UUID().uuidString).json")
        try #"{"\#(Self.keyID)": "\#(Self.secret)"}"#.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withPipeline(startWorkers: false, environment: ["IAP_CLIENT_KEYS_FILE": file.path, "IAP_RATE_PER_KEY": "1"]) { pipeline in
            var accepted: [(Data, String)] = []
            var refused = 0
            let start = Date()
            for index in 0..<10 {
                let body = try Self.receiptBody("burst-\(index)")
                let reply = try await pipeline.post(raw: body, headers: Self.headers("POST", "/v1/receipts", body))
                if reply.status == 202, let ticket = reply.json["ticket"] as? String {
                    accepted.append((body, ticket))
                } else {
                    #expect(reply.status == 429)
                    #expect((reply.json["error"] as? [String: Any])?["code"] as? String == "rate_limited")
                    #expect(reply.headers["retry-after"] == "1")
                    refused += 1
                }
            }
            // One a second: at most one per second the burst touched.
            let seconds = Int(Date().timeIntervalSince1970) - Int(start.timeIntervalSince1970) + 1
            #expect(accepted.count >= 1 && accepted.count <= seconds, "\(accepted.count) accepted over \(seconds) s")
            #expect(refused == 10 - accepted.count)
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == accepted.count)
            let (body, ticket) = try #require(accepted.first)
            let resend = try await pipeline.post(
                raw: body, headers: Self.headers("POST", "/v1/receipts", body, timestamp: Int64(Date().timeIntervalSince1970) + 1))
            #expect(resend.status == 200 && resend.json["ticket"] as? String == ticket)
        }
    }

    /// Fuzz: 300 requests, each a valid signed submission with one thing broken at random (a
    /// header dropped or replaced with junk, the timestamp moved or garbled, a body byte flipped,
    /// the body cut or grown after signing, or a junk body signed properly). Every answer is a 4xx
    /// with a code, and nothing is queued.
    @Test func brokenRequestsGetOnly4xxAndQueueNothing() async throws {
        try await withSigningPipeline { pipeline, _ in
            var random = SystemRandomNumberGenerator()
            func junk(_ length: Int, from alphabet: String) -> String {
                String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
            }
            let printable = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/+=!@#$%^&*() "
            var statuses: [Int: Int] = [:]
            for index in 0..<300 {
                let now = Int64(Date().timeIntervalSince1970)
                var body = try Self.receiptBody("fuzz-\(index)")
                var headers = Self.headers("POST", "/v1/receipts", body, timestamp: now)
                let kind = Int.random(in: 0..<8, using: &random)
                switch kind {
                case 0:
                    headers.remove(at: Int.random(in: 0..<3, using: &random))
                case 1:
                    let slot = Int.random(in: 0..<3, using: &random)
                    headers[slot].1 = junk(Int.random(in: 1..<80, using: &random), from: printable)
                case 2:
                    let shift = Int64.random(in: 310...100_000, using: &random) * (Bool.random(using: &random) ? 1 : -1)
                    headers = Self.headers("POST", "/v1/receipts", body, timestamp: now + shift)
                case 3:
                    let at = Int.random(in: 0..<body.count, using: &random)
                    body[at] ^= UInt8.random(in: 1...255, using: &random)
                case 4:
                    body = body.prefix(Int.random(in: 0..<body.count, using: &random))
                case 5:
                    body.append(contentsOf: Array(junk(Int.random(in: 1..<40, using: &random), from: printable).utf8))
                case 6:
                    headers[2].1 = junk(64, from: "0123456789abcdef")
                default:
                    // Properly signed, but no receipt the intake can take.
                    body = Data(junk(Int.random(in: 0..<200, using: &random), from: printable + "{}[]\":,").utf8)
                    headers = Self.headers("POST", "/v1/receipts", body, timestamp: now)
                }
                let reply = try await pipeline.post(raw: body, headers: headers)
                statuses[reply.status, default: 0] += 1
                let code = (reply.json["error"] as? [String: Any])?["code"] as? String
                #expect((400..<500).contains(reply.status) && code != nil, "case \(kind): \(reply.status) \(reply.json)")
            }
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 0, "\(statuses)")
        }
    }

    @Test func healthChecksAndApplesNotificationsNeedNoClientSignature() async throws {
        try await withSigningPipeline { pipeline, _ in
            #expect(try await pipeline.get("/healthz").status == 200)
            #expect(try await pipeline.get("/readyz").status == 200)
            // Apple's own signature is checked there: garbage is a 400 of that route, not a 401.
            let notification = try await pipeline.post(raw: Data(#"{"signedPayload": "x"}"#.utf8), path: "/v1/notifications/apple")
            #expect(notification.status == 400)
        }
    }

    /// Keys are replaced from the file (SIGHUP in the intake): the new key signs, the removed one
    /// no longer does; a file that does not load leaves the keys in force.
    @Test func reloadingTheFileAddsAndRevokesKeys() async throws {
        try await withSigningPipeline { pipeline, file in
            let keyring = try #require(pipeline.clientKeys)
            try #"{"backend-2": "another-secret-0123456789"}"#.write(to: file, atomically: true, encoding: .utf8)
            #expect(try keyring.reload().ids == ["backend-2"])
            let body = try Self.receiptBody("k1")
            let old = try await pipeline.post(raw: body, headers: Self.headers("POST", "/v1/receipts", body))
            #expect(old.status == 401)
            let new = try await pipeline.post(
                raw: body, headers: Self.headers("POST", "/v1/receipts", body, keyID: "backend-2", secret: "another-secret-0123456789"))
            #expect(new.status == 202)
            try "{ not json".write(to: file, atomically: true, encoding: .utf8)
            #expect(throws: ConfigurationError.self) { try keyring.reload() }
            #expect(keyring.current.ids == ["backend-2"])
        }
    }

    /// The shell recipe in docs/security.md (`printf … | openssl dgst -sha256 -hmac`) gives this signature.
    @Test func theSignatureIsTheDocumentedHMAC() {
        let headers = RequestSigner(keyID: "k", secret: Self.secret).headers(
            method: "POST", target: "/v1/receipts", body: Array(#"{"a":1}"#.utf8), timestamp: 1_795_000_000)
        #expect(headers.first { $0.0 == "X-IAP-Signature" }?.1 == "e837091134e5d520dea1808acfb22cbf989e8d721267ce2ddfe2757764055e10")
    }

    @Test(arguments: [
        ("{}", "names no key"),
        (#"{"k": "short"}"#, "shorter than 16 bytes"),
        (#"{"k": 5}"#, "is not a string"),
        (#"["k"]"#, "is not a JSON object"),
        (#"{"a key": "0123456789abcdef0"}"#, "without spaces"),
        (#"{"k": {"scopes": ["support"]}}"#, "has no \"secret\" string"),
        (#"{"k": {"secret": "0123456789abcdef0", "scopes": ["admin"]}}"#, "names a scope that is none of"),
        (#"{"k": {"secret": "0123456789abcdef0", "scopes": []}}"#, "has no scope"),
        (#"{"k": {"secret": "0123456789abcdef0", "scopes": "support"}}"#, "are not an array"),
        (#"{"k": {"secret": "0123456789abcdef0", "scope": ["support"]}}"#, "unknown member \"scope\""),
    ])
    func aKeysFileThatCannotBeTrustedIsRefused(text: String, problem: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("client-keys-\(UUID().uuidString).json")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            _ = try ClientKeys.load(file: file.path)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.variable == "IAP_CLIENT_KEYS_FILE" && error.problem.contains(problem), "\(error)")
        }
        #expect(throws: ConfigurationError.self) { try ClientKeys.load(file: file.path + ".missing") }
    }
}
