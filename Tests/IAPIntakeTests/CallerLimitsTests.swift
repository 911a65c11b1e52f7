import AppleSimulator
import Foundation
import Hummingbird
import HummingbirdCore
import IAPClient
@testable import IAPIntake
import PipelineCore
import PipelineTestSupport
import TestSupport
import Testing

/// What one key may read and spend: a ticket is read only with the key that submitted it (or a
/// support key), a support look-up that spent Apple's budget is not replayable, a key's waiting
/// requests are capped, and a request dripped in slowly loses its connection.
@Suite(.serialized) struct CallerLimitsTests {
    static let first = (id: "backend-1", secret: "0123456789abcdef-backend-secret")
    static let second = (id: "backend-2", secret: "fedcba9876543210-backend-secret")
    static let desk = (id: "desk", secret: "desk-0123456789abcdef-secret")

    private func withKeys(_ environment: [String: String] = [:], _ body: (PipelineHarness) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("client-keys-\(UUID().uuidString).json")
        try #"""
            {"\#(Self.first.id)": "\#(Self.first.secret)", "\#(Self.second.id)": "\#(Self.second.secret)",
             "\#(Self.desk.id)": {"secret": "\#(Self.desk.secret)", "scopes": ["receipts", "support"]}}
            """#.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withPipeline(
            startWorkers: false, serverAPI: true, environment: environment.merging(["IAP_CLIENT_KEYS_FILE": file.path]) { a, _ in a }
        ) { pipeline in try await body(pipeline) }
    }

    static func signed(_ method: String, _ target: String, _ body: Data = Data(), as key: (id: String, secret: String)) -> [(String, String)] {
        RequestSigner(keyID: key.id, secret: key.secret).headers(
            method: method, target: target, body: body, timestamp: Int64(Date().timeIntervalSince1970))
    }

    func submit(_ pipeline: PipelineHarness, _ id: String, as key: (id: String, secret: String) = first) async throws -> String {
        let body = try JSONSerialization.data(withJSONObject: ["receipt_data": receipt([gold(id)]).receiptData(), "user_id": "player-1"])
        let reply = try await pipeline.post(raw: body, headers: Self.signed("POST", "/v1/receipts", body, as: key))
        #expect(reply.status == 202)
        return try #require(reply.json["ticket"] as? String)
    }

    @Test func aTicketIsReadOnlyWithTheKeyThatSubmittedItOrASupportKey() async throws {
        try await withKeys { pipeline in
            let ticket = try await submit(pipeline, "owned-1")
            let path = "/v1/receipts/\(ticket)"
            #expect(try await pipeline.get(path, headers: Self.signed("GET", path, as: Self.first)).status == 200)
            let other = try await pipeline.get(path, headers: Self.signed("GET", path, as: Self.second))
            #expect(other.status == 404 && (other.json["error"] as? [String: Any])?["code"] as? String == "ticket_not_found")
            let waiting = "\(path)?wait=1"
            #expect(try await pipeline.get(waiting, headers: Self.signed("GET", waiting, as: Self.second)).status == 404)
            #expect(try await pipeline.get(path, headers: Self.signed("GET", path, as: Self.desk)).status == 200)
        }
    }

    /// Apple failing a support look-up answers 503, but the look-up spent the fleet's budget: the
    /// same signed request again is a replay, not a retry.
    @Test func aSupportLookUpThatAskedAppleIsNotReplayable() async throws {
        try await withKeys { pipeline in
            pipeline.simulator.serverAPI.setFaults(SimulatedAPIFaults(serverErrors: 100))
            let path = "/v1/support/transactions/5100000000000009"
            let headers = Self.signed("GET", path, as: Self.desk)
            let failed = try await pipeline.get(path, headers: headers)
            #expect(failed.status == 503 || failed.status == 502, "\(failed.json)")
            let replay = try await pipeline.get(path, headers: headers)
            #expect(replay.status == 401 && (replay.json["error"] as? [String: Any])?["code"] as? String == "replayed_request")
        }
    }

    /// `IAP_MAX_WAITING_PER_KEY=1`: a second long-poll of the same key is `429 too_many_waiting`
    /// while the first waits; another key still waits; once the first ends, the key may wait again.
    @Test func aKeysWaitingRequestsAreCapped() async throws {
        try await withKeys(["IAP_MAX_WAITING_PER_KEY": "1"]) { pipeline in
            let ticket = try await submit(pipeline, "waited-1")
            let target = "/v1/receipts/\(ticket)?wait=30"
            let waiting = Task { () async throws -> (Int, String?) in
                let reply = try await pipeline.get(target, headers: Self.signed("GET", target, as: Self.first))
                return (reply.status, reply.json["status"] as? String)
            }
            // The intake's own state, in this process: polled.
            try await until("the first long-poll waits", within: .seconds(30)) { pipeline.waiters.waiting(caller: Self.first.id) == 1 }
            let second = "/v1/receipts/\(ticket)?wait=29"
            let refused = try await pipeline.get(second, headers: Self.signed("GET", second, as: Self.first))
            #expect(refused.status == 429 && (refused.json["error"] as? [String: Any])?["code"] as? String == "too_many_waiting")
            // The ticket ends: the waiting request answers, and its place is free again.
            try await pipeline.redis.send("HSET", pipeline.configuration.keys.ticket(ticket), "status", "rejected")
            try await pipeline.redis.send("SPUBLISH", pipeline.configuration.keys.results(ofTicket: ticket), ticket)
            let (status, ticketStatus) = try await waiting.value
            #expect(status == 200 && ticketStatus == "rejected")
            let again = "/v1/receipts/\(ticket)?wait=28"
            #expect(try await pipeline.get(again, headers: Self.signed("GET", again, as: Self.first)).status == 200)
            #expect(pipeline.waiters.waiting(caller: Self.first.id) == 0)
        }
    }

    /// A body dripped in slower than the read timeout loses its connection, unanswered.
    @Test func aRequestNotReadWholeInTimeLosesItsConnection() async throws {
        let router = Router()
        router.post("/echo") { request, _ in
            let body = try await request.body.collect(upTo: 1024)
            return String(buffer: body)
        }
        let server = try await RunningServer.start { onRunning in
            Application(
                router: router,
                server: .http1(configuration: .init(additionalChannelHandlers: [RequestReadTimeout(limit: .milliseconds(200))])),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await onRunning($0.localAddress?.port ?? 0) }, logger: testLogger)
        }
        // Whole: answered.
        let whole = try await RawHTTP.send(port: server.port, method: "POST", target: "/echo", body: Array("0123456789".utf8))
        #expect(whole.status == 200 && whole.text.hasSuffix("0123456789"))
        // Ten bytes of a hundred, then nothing: closed without an answer.
        let text = try await RawHTTP.exchange(
            port: server.port,
            bytes: Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789".utf8))
        #expect(text.isEmpty, "\(text)")
        await server.stop()
    }
}
