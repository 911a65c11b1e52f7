import Foundation
import IAPStages
import RedisClient
import PipelineTestSupport
import Testing
import TestSupport

/// The pipeline on a real primary, two replicas and a sentinel, with `IAP_REDIS_MIN_REPLICAS=1`:
/// twice in a row the primary is killed with SIGKILL while receipts come in and the sentinel
/// promotes a replica; every receipt the intake acknowledged is granted exactly once, and the
/// pipeline is never restarted.
@Suite(.serialized) struct FailoverTests {
    static let master = "iapfailover"

    @Test func primariesKilledUnderLoadLoseNothingAcknowledgedAndGrantNothingTwice() async throws {
        let primary = try await RedisServer.start()
        let replicas = [
            try await RedisServer.start(["--replicaof", "127.0.0.1", String(primary.port)]),
            try await RedisServer.start(["--replicaof", "127.0.0.1", String(primary.port)]),
        ]
        defer { for server in [primary] + replicas { server.stop() } }
        try await until("both replicas are in sync") {
            try await directReply(port: primary.port, "INFO", "replication").components(separatedBy: "state=online").count == 3
        }
        let sentinel = try await RedisSentinel.start(master: Self.master, primaryPort: primary.port)
        defer { sentinel.stop() }
        try await until("the sentinel knows both replicas") {
            let reply = try await directReply(port: sentinel.port, "SENTINEL", "replicas", Self.master)
            return reply.components(separatedBy: "master-link-status").count == 3
        }

        let servers = [primary] + replicas
        try await withPipeline(environment: [
            "IAP_REDIS_URL": "redis-sentinel://127.0.0.1:\(sentinel.port)/\(Self.master)",
            "IAP_REDIS_MIN_REPLICAS": "1", "IAP_REDIS_REPLICA_TIMEOUT_MS": "500",
        ]) { pipeline in
            var granted = 0
            // Two failovers in a row: the pipeline is never restarted.
            for round in 0..<2 {
                let named = try await directReply(port: sentinel.port, "SENTINEL", "get-master-addr-by-name", Self.master)
                let current = try #require(servers.first { named.hasSuffix("\n\($0.port)") })
                let receipts = (0..<40).map { index in
                    ["receipt_data": receipt([gold("fo-\(round)-\(index)")]).receiptData(), "user_id": "player-\(index % 7)"]
                }
                let tickets = try await withThrowingTaskGroup(of: String.self) { group in
                    for (index, body) in receipts.enumerated() {
                        group.addTask {
                            // Spread over 2 s, so the kill lands in the middle of the stream.
                            try await Task.sleep(for: .milliseconds(50 * index))
                            return try await Self.submitUntilAccepted(pipeline, body)
                        }
                    }
                    group.addTask {
                        try await Task.sleep(for: .milliseconds(800))
                        current.kill()
                        return ""
                    }
                    var tickets: [String] = []
                    for try await ticket in group where !ticket.isEmpty { tickets.append(ticket) }
                    return tickets
                }
                #expect(Set(tickets).count == receipts.count)
                try await until("the sentinel names another primary") {
                    let reply = try await directReply(port: sentinel.port, "SENTINEL", "get-master-addr-by-name", Self.master)
                    return !reply.hasSuffix("\n\(current.port)")
                }
                // Every acknowledged ticket ends granted: none lost.
                try await until("every ticket of round \(round) is granted") {
                    for ticket in tickets where try await pipeline.readTicket(ticket)?.status != .granted { return false }
                    return true
                }
                granted += receipts.count
                // Each purchase granted once: one fulfilment entry and one grant record per receipt.
                #expect(try await pipeline.redis.send("XLEN", pipeline.configuration.keys.fulfilment).int == Int64(granted))
                let grants = try await pipeline.redis.send("KEYS", pipeline.configuration.keys.grant(unit: "*")).array ?? []
                #expect(grants.count == granted)

                // The killed server comes back; Sentinel makes it a replica of the new primary.
                try await current.restart()
                let now = try await directReply(port: sentinel.port, "SENTINEL", "get-master-addr-by-name", Self.master)
                let primaryNow = try #require(servers.first { now.hasSuffix("\n\($0.port)") })
                try await until("both replicas follow the new primary") {
                    try await directReply(port: primaryNow.port, "INFO", "replication").components(separatedBy: "state=online").count == 3
                }
            }
        }
    }

    /// Resends a receipt, as a client does, until the intake acknowledges it (202 or 200).
    static func submitUntilAccepted(_ pipeline: PipelineHarness, _ body: [String: String]) async throws -> String {
        let reply = try await pipeline.postUntilAccepted(body)
        guard reply.status == 202 || reply.status == 200, let ticket = reply.json["ticket"] as? String else {
            throw TestSupportError("a receipt was never accepted: \(reply.status)")
        }
        return ticket
    }
}
