import Foundation
import RedisClient
import Testing
import TestSupport

/// `run(_:keys:arguments:replicated:)`: a script and `WAIT` in one pipeline on one connection,
/// against a real primary and replica.
@Suite struct ReplicationTests {
    static let script = RedisScript(name: "set_key", source: "redis.call('SET', KEYS[1], ARGV[1]); return 1")

    @Test func returnsOnceEnoughReplicasHaveTheWriteAndRefusesOtherwise() async throws {
        let primary = try await RedisServer.start()
        let replica = try await RedisServer.start(["--replicaof", "127.0.0.1", String(primary.port)])
        defer {
            replica.stop()
            primary.stop()
        }
        try await until("the replica is in sync") {
            try await directReply(port: replica.port, "INFO", "replication").contains("master_link_status:up")
        }
        let client = RedisClient(configuration: primary.configuration, poolSize: 1)
        // The first run also loads the script (SCRIPT LOAD, then the pipeline).
        let reply = try await client.run(
            Self.script, keys: ["k"], arguments: ["1"], replicated: RedisReplication(replicas: 1, timeout: .seconds(30)))
        #expect(reply.int == 1)
        #expect(try await directReply(port: replica.port, "GET", "k") == "1")

        // Two replicas wanted, one exists: the write is on the primary, and not acknowledged.
        await #expect(throws: RedisError.self) {
            try await client.run(Self.script, keys: ["k"], arguments: ["2"], replicated: RedisReplication(replicas: 2, timeout: .milliseconds(100)))
        }
        #expect(try await client.send("GET", "k").string == "2")
        do {
            try await client.run(Self.script, keys: ["k"], arguments: ["3"], replicated: RedisReplication(replicas: 2, timeout: .milliseconds(100)))
            Issue.record("a write confirmed by too few replicas was acknowledged")
        } catch let error as RedisError {
            guard case .notReplicated(let detail) = error else { throw error }
            #expect(detail.contains("1 of 2"))
            #expect(error.isTransient)
        }

        // The replica gone: nothing confirms.
        replica.kill()
        await #expect(throws: RedisError.self) {
            try await client.run(Self.script, keys: ["k"], arguments: ["4"], replicated: RedisReplication(replicas: 1, timeout: .milliseconds(100)))
        }
        // Without a requirement nothing waits.
        #expect(try await client.run(Self.script, keys: ["k"], arguments: ["5"], replicated: nil).int == 1)
        await client.close()
    }
}
