import Foundation
import Hummingbird
import PipelineCore
@testable import IAPIntake
import PipelineTestSupport
import RedisClient
import Testing

/// The intake pushes back (issue 38, items 2 and 3): past `IAP_MAX_QUEUE_DEPTH` a new submission
/// is `503 queue_full` with `Retry-After` and a resend still gets its ticket; while Redis refuses
/// writes (at `maxmemory`, `noeviction`) signed reads answer, a submission is `503 redis_full`,
/// and once Redis has room nothing was lost.
@Suite(.serialized) struct BackpressureTests {
    typealias Signing = RequestSigningTests

    /// A signing intake (one key) with a product catalog, no workers unless started, and `environment`.
    private func withSignedPipeline(_ environment: [String: String], _ body: (PipelineHarness) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("backpressure-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("client-keys.json")
        try #"{"\#(Signing.keyID)": "\#(Signing.secret)"}"#.write(to: keys, atomically: true, encoding: .utf8)
        let catalog = directory.appendingPathComponent("products.json")
        try PipelineHarness.catalogJSON.write(to: catalog, atomically: true, encoding: .utf8)
        let settings = ["IAP_CLIENT_KEYS_FILE": keys.path, "IAP_PRODUCTS_FILE": catalog.path].merging(environment) { _, new in new }
        try await withPipeline(startWorkers: false, environment: settings) { pipeline in try await body(pipeline) }
    }

    private func submit(_ pipeline: PipelineHarness, _ id: String, at second: Int64? = nil) async throws -> PipelineHarness.Reply {
        let body = try Signing.receiptBody(id)
        let timestamp = second ?? Int64(Date().timeIntervalSince1970)
        return try await pipeline.post(raw: body, headers: Signing.headers("POST", "/v1/receipts", body, timestamp: timestamp))
    }

    private func signedGet(_ pipeline: PipelineHarness, _ path: String) async throws -> PipelineHarness.Reply {
        try await pipeline.get(path, headers: Signing.headers("GET", path))
    }

    private static func code(_ reply: PipelineHarness.Reply) -> String? {
        (reply.json["error"] as? [String: Any])?["code"] as? String
    }

    @Test func pastTheDepthANewSubmissionIsPushedBackAndAResendStillGetsItsTicket() async throws {
        try await withSignedPipeline(["IAP_MAX_QUEUE_DEPTH": "2"]) { pipeline in
            let first = try await submit(pipeline, "bp-1")
            #expect(try await submit(pipeline, "bp-2").status == 202)
            #expect(first.status == 202)
            let ticket = try #require(first.json["ticket"] as? String)
            let refused = try await submit(pipeline, "bp-3")
            #expect(refused.status == 503 && Self.code(refused) == "queue_full", "\(refused.json)")
            #expect(refused.headers["retry-after"] == "5")
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 2)
            // A resend is answered with its ticket; reads are untouched.
            let resent = try await submit(pipeline, "bp-1", at: Int64(Date().timeIntervalSince1970) + 1)
            #expect(resent.status == 200 && resent.json["ticket"] as? String == ticket)
            #expect(try await signedGet(pipeline, "/v1/receipts/\(ticket)").status == 200)
            // Once the pipeline works the backlog off, the refused receipt is taken (its signature
            // was forgotten: the same request again is a retry).
            for stage in Stage.allCases { pipeline.start(stage) }
            #expect(try await pipeline.terminal(ticket).status == .granted)
            let taken = try await submit(pipeline, "bp-3", at: Int64(Date().timeIntervalSince1970) + 2)
            #expect(taken.status == 202, "\(taken.json)")
        }
    }

    @Test func signedReadsAnswerWhileRedisIsFullAndNothingIsLost() async throws {
        try await withSignedPipeline([:]) { pipeline in
            let first = try await submit(pipeline, "full-1")
            let ticket = try #require(first.json["ticket"] as? String)
            // Redis refuses every write from here (a used memory above maxmemory, noeviction).
            try await pipeline.redis.send("CONFIG", "SET", "maxmemory", "1")
            let read = try await signedGet(pipeline, "/v1/receipts/\(ticket)")
            #expect(read.status == 200 && read.json["status"] as? String == "queued", "\(read.json)")
            let entitlements = try await signedGet(pipeline, "/v1/users/player-1/entitlements")
            #expect(entitlements.status == 200, "\(entitlements.json)")
            // The same signed read again: a replayed read changes nothing and is answered.
            let path = "/v1/receipts/\(ticket)"
            let headers = Signing.headers("GET", path)
            #expect(try await pipeline.get(path, headers: headers).status == 200)
            #expect(try await pipeline.get(path, headers: headers).status == 200)
            let refused = try await submit(pipeline, "full-2")
            #expect(refused.status == 503 && Self.code(refused) == "redis_full", "\(refused.json)")
            #expect(refused.headers["retry-after"] == "5")
            // Room again: the resend is taken, and the first is where it was.
            try await pipeline.redis.send("CONFIG", "SET", "maxmemory", "0")
            let resent = try await submit(pipeline, "full-2", at: Int64(Date().timeIntervalSince1970) + 1)
            #expect(resent.status == 202, "\(resent.json)")
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 2)
            #expect(try await pipeline.store.ticket(ticket)?.status == .queued)
        }
    }

    /// A support look-up spends Apple's budget: its signature is remembered, GET or not.
    @Test func onlyReadsThatSpendNothingAreNotRemembered() {
        #expect(!RequestAuthenticator.remembers(.get, scope: .receipts))
        #expect(!RequestAuthenticator.remembers(.get, scope: .users))
        #expect(RequestAuthenticator.remembers(.get, scope: .support))
        #expect(RequestAuthenticator.remembers(.post, scope: .receipts))
        #expect(RequestAuthenticator.remembers(.put, scope: .users))
    }
}
