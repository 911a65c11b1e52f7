import Foundation
import LoopbackPort
import RedisClient
import Testing
import TestSupport

/// `redis-sentinel://`: the client asks the sentinels for the primary at every dial, uses only a
/// server whose ROLE is master, and follows failovers by itself (a real primary, replica and
/// sentinel on loopback).
@Suite struct SentinelTests {
    static let master = "iapmaster"

    @Test func parsesSentinelURLs() throws {
        let full = try RedisConfiguration(url: "redis-sentinel://:pw@10.0.0.1:26380,s2,[::1]:26381/mymaster/3")
        #expect(full.endpoint == .sentinel(.init(
            [.init(host: "10.0.0.1", port: 26380), .init(host: "s2", port: 26379), .init(host: "::1", port: 26381)],
            master: "mymaster")))
        #expect(full.password == "pw")
        #expect(full.database == 3)
        let plain = try RedisConfiguration(url: "redis-sentinel://127.0.0.1/m")
        #expect(plain.endpoint == .sentinel(.init([.init(host: "127.0.0.1", port: 26379)], master: "m")))
        #expect(plain.database == 0)
    }

    @Test(arguments: ["redis-sentinel://h", "redis-sentinel://h/", "redis-sentinel://h,/m", "redis-sentinel://h:0/m",
                      "redis-sentinel://h/m/x", "redis-sentinel://h/m/1/2"])
    func rejectsBadSentinelURLs(_ url: String) {
        #expect(throws: RedisError.self) { try RedisConfiguration(url: url) }
    }

    @Test func aSentinelThatKnowsNoSuchPrimaryIsAnErrorNotAHang() async throws {
        let primary = try await RedisServer.start()
        let sentinel = try await RedisSentinel.start(master: Self.master, primaryPort: primary.port)
        defer {
            sentinel.stop()
            primary.stop()
        }
        let client = RedisClient(configuration: try RedisConfiguration(url: "redis-sentinel://127.0.0.1:\(sentinel.port)/other"), poolSize: 1)
        await #expect(throws: RedisError.self) { try await client.send("PING") }
        await client.close()
    }

    @Test func followsTwoFailoversInARowWithoutARestart() async throws {
        let primary = try await RedisServer.start()
        let replica = try await RedisServer.start(["--replicaof", "127.0.0.1", String(primary.port)])
        try await until("the replica is in sync") {
            try await directReply(port: replica.port, "INFO", "replication").contains("master_link_status:up")
        }
        let sentinel = try await RedisSentinel.start(master: Self.master, primaryPort: primary.port)
        defer {
            sentinel.stop()
            replica.stop()
            primary.stop()
        }
        // A sentinel that is down comes first: it is skipped.
        let url = "redis-sentinel://127.0.0.1:\(try LoopbackPort.free()),127.0.0.1:\(sentinel.port)/\(Self.master)"
        let client = RedisClient(configuration: try RedisConfiguration(url: url), poolSize: 2)
        let blocking = client.makeDedicatedConnection()
        try await client.send("SET", "before", "1")
        #expect(try await directReply(port: primary.port, "GET", "before") == "1")
        #expect(try await client.send("WAIT", "1", "5000").int == 1)

        // First failover: the replica becomes the primary. Until the old primary is demoted, a
        // write may still land on it and be lost when it resyncs (what `WAIT` is for): the client
        // has followed when a write it made is on the new primary.
        try await Self.failover(sentinel, to: replica)
        try await until("a write reaches the new primary") {
            guard (try? await client.send("SET", "after-1", "2")) != nil else { return false }
            return try await directReply(port: replica.port, "GET", "after-1") == "2"
        }
        #expect(try await directReply(port: replica.port, "GET", "before") == "1")
        try await until("the blocking connection follows") {
            guard (try? await blocking.execute(RedisCommand("LPUSH", "q", "x")))?.int != nil else { return false }
            return try await directReply(port: replica.port, "LLEN", "q") != "0"
        }

        // Second failover, back to the first server (which Sentinel made a replica meanwhile).
        try await until("the old primary follows the new one") {
            try await directReply(port: primary.port, "INFO", "replication").contains("master_link_status:up")
        }
        try await Self.failover(sentinel, to: primary)
        try await until("a write reaches the first server again") {
            guard (try? await client.send("SET", "after-2", "3")) != nil else { return false }
            return try await directReply(port: primary.port, "GET", "after-2") == "3"
        }
        #expect(try await directReply(port: primary.port, "GET", "after-1") == "2")
        #expect(try await client.send("ROLE").array?.first?.string == "master")
        await blocking.close()
        await client.close()
    }

    /// Asks the sentinel for a failover (again while it says no good replica is ready yet) and
    /// waits until it names `target` as the primary.
    static func failover(_ sentinel: RedisSentinel, to target: RedisServer) async throws {
        let connection = RedisConnection(configuration: .init(endpoint: .tcp(host: "127.0.0.1", port: sentinel.port)))
        do {
            try await until("the sentinel starts a failover") {
                let reply = try await connection.execute(RedisCommand("SENTINEL", "failover", master))
                return reply.string == "OK"
            }
            try await until("the sentinel names port \(target.port)") {
                let reply = try await connection.execute(RedisCommand("SENTINEL", "get-master-addr-by-name", master))
                return reply.array?.last?.string == String(target.port)
            }
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }
}
