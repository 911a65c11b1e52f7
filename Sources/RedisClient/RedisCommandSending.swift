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
}
