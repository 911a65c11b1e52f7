/// What can run commands: a single connection or the pool.
public protocol RedisCommandSending: Sendable {
    /// Runs one command; an error reply is returned as `.error`.
    func execute(_ command: RedisCommand) async throws -> RedisReply
    /// Runs several commands in one round trip; error replies are returned inline.
    func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply]
}

extension RedisCommandSending {
    /// Runs one command and throws `RedisError.server` for an error reply.
    @discardableResult
    public func send(_ command: RedisCommand) async throws -> RedisReply {
        let reply = try await execute(command)
        if case .error(let message) = reply { throw RedisError.server(message) }
        return reply
    }

    @discardableResult
    public func send(_ arguments: String...) async throws -> RedisReply {
        try await send(RedisCommand(arguments))
    }

    /// Runs a Lua script by EVALSHA, loading it once per server when Redis answers NOSCRIPT.
    @discardableResult
    public func run(_ script: RedisScript, keys: [String], arguments: [String]) async throws -> RedisReply {
        try await run(script, keyBytes: keys.map { Array($0.utf8) }, argumentBytes: arguments.map { Array($0.utf8) })
    }

    @discardableResult
    public func run(_ script: RedisScript, keyBytes keys: [[UInt8]], argumentBytes arguments: [[UInt8]]) async throws -> RedisReply {
        let tail = [Array(String(keys.count).utf8)] + keys + arguments
        if let sha = script.loadedSHA {
            let reply = try await execute(RedisCommand(bytes: [Array("EVALSHA".utf8), Array(sha.utf8)] + tail))
            switch reply {
            case .error(let message) where message.hasPrefix("NOSCRIPT"):
                break
            case .error(let message):
                throw RedisError.server("\(script.name): \(message)")
            default:
                return reply
            }
        }
        // Unknown to this server (first use, or the server restarted): load it, then run it.
        let loaded = try await send(RedisCommand("SCRIPT", "LOAD", script.source))
        guard let sha = loaded.string else { throw RedisError.unexpectedReply("SCRIPT LOAD returned \(loaded)") }
        script.loadedSHA = sha
        let reply = try await execute(RedisCommand(bytes: [Array("EVALSHA".utf8), Array(sha.utf8)] + tail))
        if case .error(let message) = reply { throw RedisError.server("\(script.name): \(message)") }
        return reply
    }

    /// Runs a script and, in the same pipeline on the same connection, `WAIT` for `replication`'s
    /// replicas: it returns only once that many replicas have every write of the connection so far,
    /// else throws `.notReplicated` (the script ran on the primary; running it again is safe for
    /// the pipeline's scripts). Without a requirement it is `run(_:keys:arguments:)`.
    @discardableResult
    public func run(
        _ script: RedisScript, keys: [String], arguments: [String], replicated replication: RedisReplication?
    ) async throws -> RedisReply {
        guard let replication, replication.replicas > 0 else { return try await run(script, keys: keys, arguments: arguments) }
        let tail = [Array(String(keys.count).utf8)] + keys.map { Array($0.utf8) } + arguments.map { Array($0.utf8) }
        let wait = RedisCommand("WAIT", String(replication.replicas), String(replication.timeoutMs))
        for attempt in 0..<2 {
            if script.loadedSHA == nil || attempt > 0 {
                let loaded = try await send(RedisCommand("SCRIPT", "LOAD", script.source))
                guard let sha = loaded.string else { throw RedisError.unexpectedReply("SCRIPT LOAD returned \(loaded)") }
                script.loadedSHA = sha
            }
            let replies = try await pipeline([
                RedisCommand(bytes: [Array("EVALSHA".utf8), Array((script.loadedSHA ?? "").utf8)] + tail), wait,
            ])
            guard replies.count == 2 else { throw RedisError.unexpectedReply("\(script.name) + WAIT: \(replies)") }
            if case .error(let message) = replies[0] {
                // Unknown to this server (first use, a restart, a new primary): load it and go again.
                if message.hasPrefix("NOSCRIPT"), attempt == 0 { continue }
                throw RedisError.server("\(script.name): \(message)")
            }
            guard let confirmed = replies[1].int else { throw RedisError.unexpectedReply("WAIT returned \(replies[1])") }
            guard confirmed >= replication.replicas else {
                throw RedisError.notReplicated(
                    "\(script.name): \(confirmed) of \(replication.replicas) replicas confirmed within \(replication.timeoutMs) ms")
            }
            return replies[0]
        }
        throw RedisError.server("\(script.name): NOSCRIPT after SCRIPT LOAD")
    }
}

/// How many replicas must confirm a write before it is acknowledged, and how long to wait for them.
public struct RedisReplication: Sendable, Equatable {
    public var replicas: Int
    public var timeoutMs: Int

    public init(replicas: Int, timeoutMs: Int) {
        self.replicas = replicas
        self.timeoutMs = timeoutMs
    }
}
