import LoopbackPort
import RedisClient
import TestSupport
import Testing

@Suite struct RedisClientTests {
    @Test func decodesEveryReplyType() async throws {
        try await withRedis { redis, _ in
            #expect(try await redis.send("SET", "k", "v") == .status("OK"))
            #expect(try await redis.send("GET", "k") == .bulk(Array("v".utf8)))
            #expect(try await redis.send("GET", "missing") == .null)
            #expect(try await redis.send("INCRBY", "n", "-42") == .integer(-42))
            try await redis.send("RPUSH", "l", "a", "b")
            #expect(try await redis.send("LRANGE", "l", "0", "-1") == .array([.bulk(Array("a".utf8)), .bulk(Array("b".utf8))]))
            let nested = try await redis.send("EVAL", "return {1, {'x', {}}, redis.status_reply('FINE')}", "0")
            #expect(nested == .array([.integer(1), .array([.bulk(Array("x".utf8)), .array([])]), .status("FINE")]))
            #expect(try await redis.execute(RedisCommand("INCR", "k")) == .error("ERR value is not an integer or out of range"))
            await #expect(throws: RedisError.server("ERR value is not an integer or out of range")) {
                try await redis.send("INCR", "k")
            }
        }
    }

    @Test func keepsBinaryDataIntact() async throws {
        try await withRedis { redis, _ in
            let key: [UInt8] = [0, 1, 2, 255, 0]
            let value: [UInt8] = Array(0...255) + [0, 0, 13, 10]
            try await redis.send(RedisCommand(bytes: [Array("SET".utf8), key, value]))
            #expect(try await redis.send(RedisCommand(bytes: [Array("GET".utf8), key])) == .bulk(value))
            #expect(try await redis.send(RedisCommand(bytes: [Array("STRLEN".utf8), key])) == .integer(Int64(value.count)))
            try await redis.send(RedisCommand(bytes: [Array("SET".utf8), Array("empty".utf8), []]))
            #expect(try await redis.send("GET", "empty") == .bulk([]))
        }
    }

    @Test func pipelinesManyCommandsWithErrorsInline() async throws {
        try await withRedis { redis, _ in
            var commands = (0..<200).map { _ in RedisCommand("INCR", "counter") }
            commands.insert(RedisCommand("HSET", "counter", "f", "v"), at: 100)
            let replies = try await redis.pipeline(commands)
            #expect(replies.count == 201)
            #expect(replies[0] == .integer(1))
            #expect(replies[99] == .integer(100))
            #expect(replies[100].isError)
            #expect(replies[200] == .integer(200))
        }
    }

    @Test func runsScriptsAndReloadsThemAfterAFlush() async throws {
        try await withRedis { redis, _ in
            let script = RedisScript(name: "add", source: "return redis.call('INCRBY', KEYS[1], ARGV[1])")
            #expect(try await redis.run(script, keys: ["s"], arguments: ["5"]) == .integer(5))
            try await redis.send("SCRIPT", "FLUSH")
            #expect(try await redis.run(script, keys: ["s"], arguments: ["2"]) == .integer(7))
            let failing = RedisScript(name: "boom", source: "return redis.error_reply('NOPE bad')")
            await #expect(throws: RedisError.server("boom: NOPE bad")) {
                try await redis.run(failing, keys: [], arguments: [])
            }
        }
    }

    @Test func reconnectsAfterTheServerRestarts() async throws {
        try await withRedis(poolSize: 1) { redis, server in
            try await redis.send("SET", "before", "1")
            try await server.restart()
            // The event loop sees the old socket close: the next call dials afresh. A call that
            // raced the close would get a typed error and the one after it succeeds.
            let reply = try? await redis.send("PING")
            if reply == nil { #expect(try await redis.send("PING") == .status("PONG")) } else { #expect(reply == .status("PONG")) }
            #expect(try await redis.send("GET", "before") == .null)
        }
    }

    @Test func aCommandInFlightWhenTheConnectionDiesFailsAsLost() async throws {
        try await withRedis { redis, _ in
            let blocking = redis.makeDedicatedConnection()
            let id = try #require(try await blocking.send("CLIENT", "ID").int)
            let waiting = Task { try await blocking.execute(RedisCommand("BLPOP", "never", "10"), blocking: .milliseconds(10_000)) }
            // Kill it once the server shows it blocked.
            var killed: Int64 = 0
            while killed == 0 {
                let clients = try await redis.send("CLIENT", "LIST").string ?? ""
                if clients.split(separator: "\n").contains(where: { $0.hasPrefix("id=\(id) ") && $0.contains("cmd=blpop") }) {
                    killed = try await redis.send("CLIENT", "KILL", "ID", String(id)).int ?? 0
                } else {
                    await Task.yield()
                }
            }
            await #expect {
                try await waiting.value
            } throws: { error in
                if case .connectionLost = error as? RedisError { return true }
                return false
            }
            // The same connection dials again for the next command.
            #expect(try await blocking.send("PING") == .status("PONG"))
            await blocking.close()
        }
    }

    @Test func manyCallersShareOneConnectionAndEachGetsItsOwnReply() async throws {
        try await withRedis(poolSize: 1) { redis, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for caller in 0..<200 {
                    group.addTask {
                        try await redis.send("SET", "key\(caller)", "value\(caller)")
                        #expect(try await redis.send("GET", "key\(caller)") == .bulk(Array("value\(caller)".utf8)))
                        let replies = try await redis.pipeline([RedisCommand("INCR", "c\(caller)"), RedisCommand("INCR", "c\(caller)")])
                        #expect(replies == [.integer(1), .integer(2)])
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test func aCommandWithoutAReplyInTimeEndsTheConnection() async throws {
        try await withRedis { (_: RedisClient, server: RedisServer) async throws in
            var configuration = server.configuration
            // Generous enough that the PING below answers in time on a busy machine (at 200 ms a
            // CI run under load missed it).
            configuration.commandTimeout = .seconds(1)
            let connection = RedisConnection(configuration: configuration)
            // BLPOP for 3 s without saying it blocks: the reply is late.
            await #expect {
                try await connection.send("BLPOP", "never", "3")
            } throws: { error in
                if case .connectionLost(let why) = error as? RedisError { return why.contains("in time") }
                return false
            }
            #expect(try await connection.send("PING") == .status("PONG"))
            await connection.close()
        }
    }

    @Test func reportsAnUnreachableServerAsATypedError() async throws {
        let port = try LoopbackPort.free()
        var configuration = RedisConfiguration(endpoint: .tcp(host: "127.0.0.1", port: port))
        configuration.reconnectBackoff = .seconds(60) ... .seconds(60)
        let connection = RedisConnection(configuration: configuration)
        await #expect {
            try await connection.send("PING")
        } throws: { error in
            if case .connectionFailed = error as? RedisError { return true }
            return false
        }
        // During backoff the next call fails at once rather than dialling again.
        await #expect {
            try await connection.send("PING")
        } throws: { error in
            if case .connectionFailed(let why) = error as? RedisError { return why.contains("next dial") }
            return false
        }
        await connection.close()
        await #expect(throws: RedisError.closed) { try await connection.send("PING") }
    }

    @Test func authenticatesAndSelectsTheDatabaseFromTheURL() async throws {
        try await withRedis(["--requirepass", "s3cr%t"]) { _, server in
            let client = try RedisClient(url: "redis://:s3cr%25t@127.0.0.1:\(server.port)/3", poolSize: 1)
            try await client.send("SET", "where", "db3")
            #expect(try await client.send("CLIENT", "INFO").string?.contains("db=3") == true)
            await client.close()
            let wrong = try RedisClient(url: "redis://:nope@127.0.0.1:\(server.port)", poolSize: 1)
            await #expect {
                try await wrong.send("PING")
            } throws: { error in
                if case .connectionFailed(let why) = error as? RedisError { return !why.contains("nope") }
                return false
            }
            await wrong.close()
        }
    }

    @Test func blockingMoveWaitsOnItsOwnConnection() async throws {
        try await withRedis { redis, _ in
            let blocking = redis.makeDedicatedConnection()
            defer { Task { await blocking.close() } }
            let empty = try await blocking.execute(RedisCommand("BLMOVE", "q", "w", "RIGHT", "LEFT", "0.05"), blocking: .milliseconds(50))
            #expect(empty == .null)
            async let moved = blocking.execute(RedisCommand("BLMOVE", "q", "w", "RIGHT", "LEFT", "5"), blocking: .milliseconds(5000))
            try await redis.send("LPUSH", "q", "job")
            #expect(try await moved == .bulk(Array("job".utf8)))
            #expect(try await redis.send("LRANGE", "w", "0", "-1") == .array([.bulk(Array("job".utf8))]))
        }
    }

    @Test func poolServesMoreCallersThanConnections() async throws {
        try await withRedis(poolSize: 2) { redis, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<64 { group.addTask { try await redis.send("INCR", "hits") } }
                try await group.waitForAll()
            }
            #expect(try await redis.send("GET", "hits").int == 64)
        }
    }
}

@Suite struct RedisConfigurationTests {
    @Test func parsesTCPURLs() throws {
        let full = try RedisConfiguration(url: "redis://user:p%40ss@cache.local:6380/2")
        #expect(full.endpoint == .tcp(host: "cache.local", port: 6380))
        #expect(full.username == "user")
        #expect(full.password == "p@ss")
        #expect(full.database == 2)
        let plain = try RedisConfiguration(url: "redis://127.0.0.1")
        #expect(plain.endpoint == .tcp(host: "127.0.0.1", port: 6379))
        #expect(plain.password == nil)
        #expect(try RedisConfiguration(url: "redis://:pw@h").password == "pw")
        #expect(try RedisConfiguration(url: "redis://[::1]:7000").endpoint == .tcp(host: "::1", port: 7000))
    }

    @Test func parsesUnixURLs() throws {
        let unix = try RedisConfiguration(url: "unix:///run/redis.sock?db=4")
        #expect(unix.endpoint == .unix(path: "/run/redis.sock"))
        #expect(unix.database == 4)
    }

    @Test(arguments: ["http://x", "redis://", "redis://h:0", "redis://h:99999", "redis://h/x", "unix://relative", "redis://h:ab"])
    func rejectsBadURLs(_ url: String) {
        #expect(throws: RedisError.self) { try RedisConfiguration(url: url) }
    }
}

extension RedisReply {
    var isError: Bool {
        if case .error = self { return true }
        return false
    }
}

@Suite struct RedisErrorTests {
    @Test func serverStateErrorsAreTransientCommandErrorsAreNot() {
        #expect(RedisError.connectionLost("x").isTransient)
        #expect(RedisError.connectionFailed("x").isTransient)
        #expect(RedisError.server("LOADING Redis is loading the dataset in memory").isTransient)
        #expect(RedisError.server("forward_job: OOM command not allowed when used memory > 'maxmemory'.").isTransient)
        #expect(RedisError.server("READONLY You can't write against a read only replica.").isTransient)
        #expect(!RedisError.server("ERR wrong number of arguments").isTransient)
        #expect(!RedisError.server("forward_job: ERR user_script:1: Script attempted to access nonexistent global variable").isTransient)
        #expect(!RedisError.closed.isTransient)
    }

    @Test func aFullRedisRefusesScriptsWithATransientError() async throws {
        try await withRedis { redis, _ in
            let script = RedisScript(name: "write", source: "return redis.call('SET', KEYS[1], ARGV[1])")
            try await redis.run(script, keys: ["k"], arguments: ["warm"])
            try await redis.send("CONFIG", "SET", "maxmemory-policy", "noeviction")
            try await redis.send("CONFIG", "SET", "maxmemory", "1")
            await #expect {
                try await redis.run(script, keys: ["k"], arguments: ["v"])
            } throws: { ($0 as? RedisError)?.isTransient == true }
            try await redis.send("CONFIG", "SET", "maxmemory", "0")
            #expect(try await redis.run(script, keys: ["k"], arguments: ["v"]) == .status("OK"))
        }
    }
}
