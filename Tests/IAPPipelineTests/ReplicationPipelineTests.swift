import Foundation
import PipelineCore
import RedisClient
import PipelineTestSupport
import Testing
import TestSupport

/// `IAP_REDIS_MIN_REPLICAS`: the intake acknowledges a receipt, and the stages claim and grant,
/// only once a replica has it.
@Suite(.serialized) struct ReplicationPipelineTests {
    @Test func aReceiptIsAcknowledgedOnlyOnceAReplicaHasIt() async throws {
        try await withPipeline(
            startWorkers: false, environment: ["IAP_REDIS_MIN_REPLICAS": "1", "IAP_REDIS_REPLICA_TIMEOUT_MS": "200"]
        ) { pipeline in
            let body: [String: Any] = ["receipt_data": receipt([gold("41")]).receiptData(), "user_id": "u-rep"]
            // No replica: stored on the primary, but not acknowledged.
            let refused = try await pipeline.post(body)
            #expect(refused.status == 503)
            #expect((refused.json["error"] as? [String: Any])?["code"] as? String == "not_replicated")

            let replica = try await RedisServer.start(["--replicaof", "127.0.0.1", String(pipeline.redisServer.port)])
            defer { replica.stop() }
            try await until("the replica is in sync") {
                let info = try await pipeline.redis.send("INFO", "replication").string ?? ""
                return info.contains("connected_slaves:1") && info.contains("state=online")
            }
            // The resend gets the ticket the first attempt created: one job, one ticket.
            let resent = try await pipeline.post(body)
            #expect(resent.status == 200)
            let ticket = try #require(resent.json["ticket"] as? String)
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 1)

            // Claims and grants wait for the replica too, and go through.
            for stage in Stage.allCases { pipeline.start(stage) }
            let done = try await pipeline.terminal(ticket)
            #expect(done.status == .granted)
            let replicated = RedisConnection(configuration: replica.configuration)
            try await until("the replica has the grant") {
                let status = try await replicated.execute(RedisCommand("HGET", pipeline.configuration.keys.ticket(ticket), "status"))
                return status.string == "granted"
            }
            await replicated.close()
        }
    }
}
