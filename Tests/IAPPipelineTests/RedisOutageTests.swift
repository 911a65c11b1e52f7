import PipelineTestSupport
import Testing

/// The whole pipeline through a restart of its Redis.
@Suite(.serialized) struct RedisOutageTests {
    @Test func thePipelineCarriesOnAfterRedisRestarts() async throws {
        try await withPipeline { pipeline in
            #expect(try await pipeline.terminal(try await pipeline.submit(receipt([gold("1")]))).status == .granted)
            try await pipeline.redisServer.restart()
            // Submitting retries through the 503s a client sees while connections re-dial.
            let reply = try await pipeline.postUntilAccepted(["receipt_data": receipt([gold("2")]).receiptData(), "user_id": "u"])
            #expect(reply.status == 202)
            let ticket = try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
            #expect(ticket.status == .granted)
        }
    }
}
