@testable import RedisClient
import TestSupport
import Testing

/// Redis Cluster: slots as Redis computes them, and a client that routes by slot and follows the
/// cluster while slots move (MOVED, ASK, TRYAGAIN), against a real cluster of 3 primaries with a
/// replica each on loopback.
@Suite struct RedisClusterTests {
    @Test func slotsAreRedisOwn() {
        #expect(RedisClusterSlot.crc16(Array("123456789".utf8)[...]) == 0x31C3)
        #expect(RedisClusterSlot.of("foo") == 12182)
        #expect(RedisClusterSlot.of("{user1000}.following") == RedisClusterSlot.of("{user1000}.followers"))
        #expect(RedisClusterSlot.of("{user1000}.following") == RedisClusterSlot.of("user1000"))
        // An empty tag does not count; only the first { and the } after it do.
        #expect(RedisClusterSlot.of("foo{}{bar}") != RedisClusterSlot.of("bar"))
        #expect(RedisClusterSlot.of("foo{{bar}}zap") == RedisClusterSlot.of("{bar"))
        #expect(RedisClusterSlot.of("foo{bar}{zap}") == RedisClusterSlot.of("bar"))
    }

    /// The table-driven CRC against the bitwise one it was made from, on every byte and on keys.
    @Test func theTableCRCIsTheBitwiseOne() {
        func bitwise(_ bytes: [UInt8]) -> UInt16 {
            var crc: UInt16 = 0
            for byte in bytes {
                crc ^= UInt16(byte) << 8
                for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
            }
            return crc
        }
        for byte in 0...255 { #expect(RedisClusterSlot.crc16([UInt8(byte)][...]) == bitwise([UInt8(byte)])) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let key = (0..<Int.random(in: 0...80, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(RedisClusterSlot.crc16(key[...]) == bitwise(key))
            #expect(RedisClusterSlot.of(key) == Int(bitwise(Array(RedisClusterSlot.hashed(key))) % 16384))
        }
    }

    @Test func aCommandIsRoutedByItsFirstKey() {
        #expect(RedisCommand("GET", "a").clusterKey == Array("a".utf8))
        #expect(RedisCommand("EVALSHA", "sha", "2", "k1", "k2", "arg").clusterKey == Array("k1".utf8))
        #expect(RedisCommand("EVALSHA", "sha", "0", "arg").clusterKey == nil)
        #expect(RedisCommand("XREAD", "BLOCK", "10", "STREAMS", "s", "0").clusterKey == Array("s".utf8))
        #expect(RedisCommand("WAIT", "1", "100").clusterKey == nil)
        var load = RedisCommand("SCRIPT", "LOAD", "return 1")
        load.routingKey = Array("k".utf8)
        #expect(load.clusterKey == Array("k".utf8))
    }

    /// The slot is read from the key where it lies, a string's or bytes', and is the key's slot;
    /// a command's name is matched in any case, as Redis reads it.
    @Test func aCommandsSlotIsItsFirstKeys() {
        let commands = [
            RedisCommand("GET", "user:{42}:lifetime"),
            RedisCommand("evalsha", "sha", "2", "iap:{7}:ticket:t", "k2", "arg"),
            RedisCommand(bytes: [Array("EVALSHA".utf8), Array("sha".utf8), Array("1".utf8), [0xFF, 0x00, 0x7B, 0x7D]]),
            RedisCommand(parts: [.text("xreadgroup"), .text("GROUP"), .text("g"), .text("c"), .text("streams"), .bytes(Array("s".utf8)), .text(">")]),
            RedisCommand("WAIT", "1", "100"),
            RedisCommand("evalsha", "sha", "0", "arg"),
        ]
        for command in commands {
            #expect(command.clusterSlot == command.clusterKey.map(RedisClusterSlot.of))
        }
        #expect(commands[1].clusterKey == Array("iap:{7}:ticket:t".utf8))
        #expect(commands[3].clusterKey == Array("s".utf8))
        #expect(commands[4].clusterSlot == nil && commands[5].clusterSlot == nil)
    }

    @Test func clusterURLsNameTheSeeds() throws {
        let configuration = try RedisConfiguration(url: "redis-cluster://app:s%40cret@10.0.0.1:7000,10.0.0.2")
        #expect(configuration.endpoint == .cluster([.init(host: "10.0.0.1", port: 7000), .init(host: "10.0.0.2", port: 6379)]))
        #expect(configuration.username == "app" && configuration.password == "s@cret")
        #expect(throws: RedisError.self) { try RedisConfiguration(url: "redis-cluster://h:7000/1") }
        #expect(throws: RedisError.self) { try RedisConfiguration(url: "redis-cluster://") }
    }

    @Test func redirectionsAreRead() {
        #expect(RedisClusterRouter.Redirect(.error("MOVED 3999 127.0.0.1:6381")) == .moved(slot: 3999, .init(host: "127.0.0.1", port: 6381)))
        #expect(RedisClusterRouter.Redirect(.error("ASK 3999 10.0.0.2:7001")) == .ask(.init(host: "10.0.0.2", port: 7001)))
        #expect(RedisClusterRouter.Redirect(.error("TRYAGAIN Multiple keys request during rehashing of slot")) != nil)
        #expect(RedisClusterRouter.Redirect(.error("CLUSTERDOWN The cluster is down")) != nil)
        #expect(RedisClusterRouter.Redirect(.error("ERR wrong number of arguments")) == nil)
        #expect(RedisClusterRouter.Redirect(.status("OK")) == nil)
    }

    @Test func everyKeyReachesTheNodeOfItsSlotAndScriptsRunWhereTheirKeysAre() async throws {
        try await withRedisCluster { client, nodes in
            let keys = (0..<300).map { "key-\($0)" }
            for key in keys { try await client.send("SET", key, "v-\(key)") }
            // Each key is on its slot's primary, and our slot is Redis's.
            for key in keys.prefix(40) {
                let slot = RedisClusterSlot.of(key)
                let owner = try await nodes.primaryPort(ofSlot: slot)
                #expect(try await directReply(port: owner, "CLUSTER", "KEYSLOT", key) == String(slot))
                #expect(try await directReply(port: owner, "GET", key) == "v-\(key)")
            }
            #expect(Set(try await keys.asyncMap { try await nodes.primaryPort(ofSlot: RedisClusterSlot.of($0)) }).count == 3)
            // A script touches keys of one tag; it is loaded on each node the first time it runs there.
            let script = RedisScript(name: "pair", source: "redis.call('SET', KEYS[1], ARGV[1]); redis.call('SET', KEYS[2], ARGV[1]); return redis.call('GET', KEYS[2])")
            for tag in ["a", "b", "c", "d", "e", "f", "g", "h"] {
                let reply = try await client.run(script, keys: ["{\(tag)}one", "{\(tag)}two"], arguments: [tag])
                #expect(reply.string == tag)
            }
            // A write confirmed by its shard's replica (WAIT in the same pipeline, on the same node).
            let replicated = try await client.run(
                script, keys: ["{w}one", "{w}two"], arguments: ["w"], replicated: RedisReplication(replicas: 1, timeout: .seconds(30)))
            #expect(replicated.string == "w")
        }
    }

    @Test func theClientFollowsASlotThatMovesAndOneThatIsMoving() async throws {
        try await withRedisCluster { client, nodes in
            // Moved for good: the client's map is stale, the old owner answers MOVED.
            try await client.send("SET", "{moved}k", "before")
            let slot = RedisClusterSlot.of("{moved}k")
            let source = try await nodes.primaryPort(ofSlot: slot)
            let target = try await nodes.primaryPorts().first { $0 != source }!
            try await nodes.beginMove(slot, from: source, to: target)
            try await nodes.migrate(["{moved}k"], from: source, to: target)
            try await nodes.endMove(slot, to: target)
            #expect(try await client.send("GET", "{moved}k").string == "before")
            #expect(try await nodes.primaryPort(ofSlot: slot) == target)
            try await client.send("SET", "{moved}k", "after")
            #expect(try await directReply(port: target, "GET", "{moved}k") == "after")

            // Half moved: one key left (ASK to the new node), one not yet; a command over both waits (TRYAGAIN).
            try await client.send("SET", "{ask}1", "one")
            try await client.send("SET", "{ask}2", "two")
            let askSlot = RedisClusterSlot.of("{ask}1")
            let from = try await nodes.primaryPort(ofSlot: askSlot)
            let to = try await nodes.primaryPorts().first { $0 != from }!
            try await nodes.beginMove(askSlot, from: from, to: to)
            try await nodes.migrate(["{ask}1"], from: from, to: to)
            #expect(try await client.send("GET", "{ask}1").string == "one")
            #expect(try await client.send("GET", "{ask}2").string == "two")
            // The old owner no longer has it: it sends the client on (which the client followed above).
            let old = RedisConnection(configuration: .init(endpoint: .tcp(host: "127.0.0.1", port: from)))
            #expect(try await old.execute(RedisCommand("GET", "{ask}1")) == .error("ASK \(askSlot) 127.0.0.1:\(to)"))
            await old.close()
            // A script on the key that left runs on the new node, which never ran it (NOSCRIPT: sent whole).
            let script = RedisScript(name: "get", source: "return redis.call('GET', KEYS[1])")
            #expect(try await client.run(script, keys: ["{ask}2"], arguments: []).string == "two")
            #expect(try await client.run(script, keys: ["{ask}1"], arguments: []).string == "one")
            // While the slot stays split, a command over both keys is retried, then refused as transient.
            await #expect { try await client.send("MGET", "{ask}1", "{ask}2") } throws: { error in
                (error as? RedisError)?.isTransient == true && "\(error)".contains("TRYAGAIN")
            }
            // Retried until the move ends.
            let both = Task { try await client.send("MGET", "{ask}1", "{ask}2") }
            try await nodes.migrate(["{ask}2"], from: from, to: to)
            try await nodes.endMove(askSlot, to: to)
            #expect(try await both.value.array?.compactMap(\.string) == ["one", "two"])
        }
    }

    /// A primary dies: its replica takes over its slots, and the client finds the new primary by
    /// itself (a failed dial makes it read the map again). Calls made meanwhile fail as transient.
    @Test func theClientFollowsAFailover() async throws {
        try await withRedisCluster(nodeTimeout: .seconds(2)) { client, nodes in
            try await client.send("SET", "{fo}k", "before")
            let slot = RedisClusterSlot.of("{fo}k")
            let dead = try await nodes.primaryPort(ofSlot: slot)
            nodes.kill(port: dead)
            try await until("a write to the dead primary's slot succeeds", within: .seconds(60)) {
                do {
                    try await client.send("SET", "{fo}k", "after")
                    return true
                } catch let error as RedisError {
                    #expect(error.isTransient, "\(error)")
                    return false
                }
            }
            let promoted = try await nodes.primaryPort(ofSlot: slot)
            #expect(promoted != dead)
            #expect(try await directReply(port: promoted, "GET", "{fo}k") == "after")
            #expect(try await client.send("GET", "{fo}k").string == "after")
        }
    }

    /// Results reach a waiting client over sharded pub/sub on the channel's primary; when the slot
    /// moves the subscription ends with a transient error, and a new one finds the new owner.
    @Test func aShardedSubscriptionHearsItsChannelAndEndsWhenTheSlotMoves() async throws {
        try await withRedisCluster { client, nodes in
            let configuration = try RedisConfiguration(url: nodes.url)
            let channel = "{r}results"
            let subscription = try await RedisSubscription(configuration: configuration, channels: [channel])
            #expect(try await client.send("SPUBLISH", channel, "ticket-1").int == 1)
            let heard = try await subscription.next(timeout: .seconds(5))
            #expect(heard.channel == channel && heard.message == "ticket-1")
            await #expect(throws: RedisError.self) {
                try await RedisSubscription(configuration: configuration, channels: ["{a}one", "{b}two"])
            }

            let slot = RedisClusterSlot.of(channel)
            let source = try await nodes.primaryPort(ofSlot: slot)
            let target = try await nodes.primaryPorts().first { $0 != source }!
            try await nodes.beginMove(slot, from: source, to: target)
            try await nodes.endMove(slot, to: target)
            await #expect { try await subscription.next(timeout: .seconds(10)) } throws: { ($0 as? RedisError)?.isTransient == true }
            await subscription.close()

            let again = try await RedisSubscription(configuration: configuration, channels: [channel])
            #expect(try await client.send("SPUBLISH", channel, "ticket-2").int == 1)
            #expect(try await again.next(timeout: .seconds(5)).message == "ticket-2")
            await again.close()
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
