import Foundation
import RedisClient
import Testing
import TestSupport

/// `rediss://`: TLS to a real `redis-server` (Debian's is built with it), its certificate always
/// verified; and sentinels with a password of their own.
@Suite struct RedisTLSTests {
    @Test func parsesTLSURLs() throws {
        #expect(try RedisConfiguration(url: "rediss://:pw@h:6380/1").tls == .init())
        #expect(try RedisConfiguration(url: "rediss-sentinel://s1,s2/m").tls == .init())
        #expect(try RedisConfiguration(url: "rediss-cluster://n1,n2").tls == .init())
        #expect(try RedisConfiguration(url: "redis://h").tls == nil)
        #expect(throws: RedisError.self) { try RedisConfiguration(url: "redisss://h") }
        #expect("\(try RedisConfiguration(url: "rediss://app:pw@h"))".contains("over TLS"))
    }

    @Test func aServerOurCASignedIsTalkedToOverTLS() async throws {
        let certificates = try TestCertificates()
        defer { certificates.remove() }
        let server = try await RedisServer.start(tls: certificates)
        defer { server.stop() }
        for host in ["127.0.0.1", "localhost"] {
            var configuration = try RedisConfiguration(url: "rediss://\(host):\(server.port)")
            configuration.tls = .init(caFile: certificates.caFile)
            let client = RedisClient(configuration: configuration, poolSize: 1)
            try await client.send("SET", "tls-key", "over TLS")
            #expect(try await client.send("GET", "tls-key").string == "over TLS", "\(host)")
            await client.close()
        }
    }

    /// A server whose certificate another CA signed, or one that speaks plain TCP, is never talked
    /// to: no command reaches it (`DBSIZE` stays 0 when read over a trusted connection).
    @Test func aServerOurCADidNotSignIsNeverTalkedTo() async throws {
        let certificates = try TestCertificates()
        let stranger = try TestCertificates(name: "Some Other Root")
        defer {
            certificates.remove()
            stranger.remove()
        }
        let server = try await RedisServer.start(tls: certificates)
        defer { server.stop() }
        var untrusting = try RedisConfiguration(url: "rediss://127.0.0.1:\(server.port)")
        untrusting.tls = .init(caFile: stranger.caFile)
        let refused = RedisClient(configuration: untrusting, poolSize: 1)
        await #expect(throws: RedisError.self) { try await refused.send("SET", "written", "by a stranger") }
        await refused.close()
        // The system's roots do not know our test CA either.
        let system = RedisClient(configuration: try RedisConfiguration(url: "rediss://127.0.0.1:\(server.port)"), poolSize: 1)
        await #expect(throws: RedisError.self) { try await system.send("SET", "written", "unverified") }
        await system.close()

        var trusting = untrusting
        trusting.tls = .init(caFile: certificates.caFile)
        let trusted = RedisClient(configuration: trusting, poolSize: 1)
        #expect(try await trusted.send("DBSIZE").int == 0)
        await trusted.close()
        #expect(RedisConnection.problem(with: .init(caFile: "/nonexistent/ca.pem")) != nil)
    }

    /// `sentinelPassword`: sentinels with `requirepass` name the primary only to a client that
    /// authenticates; without it, no sentinel answers.
    @Test func sentinelsWithAPasswordOfTheirOwn() async throws {
        let primary = try await RedisServer.start()
        let sentinel = try await RedisSentinel.start(master: "iapmaster", primaryPort: primary.port, password: "sentinel-secret-1")
        defer {
            sentinel.stop()
            primary.stop()
        }
        var configuration = try RedisConfiguration(url: "redis-sentinel://127.0.0.1:\(sentinel.port)/iapmaster")
        let anonymous = RedisClient(configuration: configuration, poolSize: 1)
        await #expect(throws: RedisError.self) { try await anonymous.send("PING") }
        await anonymous.close()
        configuration.sentinelPassword = "sentinel-secret-1"
        let client = RedisClient(configuration: configuration, poolSize: 1)
        #expect(try await client.send("PING").string == "PONG")
        await client.close()
    }
}
