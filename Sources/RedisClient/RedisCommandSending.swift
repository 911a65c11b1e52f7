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
        try await evaluate(script, Self.call(keys: keys, arguments: arguments), then: [])[0]
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
        let wait = RedisCommand("WAIT", String(replication.replicas), String(replication.timeout.milliseconds))
        let replies = try await evaluate(
            script, Self.call(keys: keys, arguments: arguments), then: [wait])
        guard let confirmed = replies[1].int else { throw RedisError.unexpectedReply("WAIT returned \(replies[1])") }
        guard confirmed >= replication.replicas else {
            throw RedisError.notReplicated(
                "\(script.name): \(confirmed) of \(replication.replicas) replicas confirmed within \(replication.timeout)")
        }
        return replies[0]
    }

    /// EVALSHA followed by `then` in one pipeline (one connection, in order); the script's error
    /// reply is thrown. The SHA is learnt once (SCRIPT LOAD); a node that does not know the script
    /// (first use there, a restart, a new primary, or a slot being migrated whose `ASK` sent the
    /// call to a node that never ran it) gets it whole by EVAL, which also keeps it there.
    private func evaluate(_ script: RedisScript, _ call: consuming RedisCommand, then: [RedisCommand]) async throws -> [RedisReply] {
        if script.loadedSHA == nil {
            // On a cluster, loaded on the node its keys live on (any node would do: EVAL follows).
            var load = RedisCommand("SCRIPT", "LOAD", script.source)
            load.routingKey = call.clusterKey
            let loaded = try await send(load)
            guard let sha = loaded.string else { throw RedisError.unexpectedReply("SCRIPT LOAD returned \(loaded)") }
            script.loadedSHA = sha
        }
        call.parts[1] = .text(script.loadedSHA ?? "")  // in place: the call's parts are its own
        var replies = try await sendAll([copy call] + then)
        if case .error(let message) = replies.first, message.hasPrefix("NOSCRIPT") {
            call.parts[0] = .text("EVAL")
            call.parts[1] = .text(script.source)
            replies = try await sendAll([copy call] + then)
        }
        guard replies.count == 1 + then.count else { throw RedisError.unexpectedReply("\(script.name): \(replies)") }
        if case .error(let message) = replies[0] { throw RedisError.server("\(script.name): \(message)") }
        return replies
    }

    /// `EVALSHA`, a place for the script's SHA, the key count, the keys and the arguments: one
    /// array of parts, each argument as given (a string is not copied into bytes of its own).
    private static func call(keys: [String], arguments: [String]) -> RedisCommand {
        var parts: [RedisCommand.Argument] = []
        parts.reserveCapacity(3 + keys.count + arguments.count)
        parts.append(.text("EVALSHA"))
        parts.append(.text(""))
        parts.append(.text(String(keys.count)))
        for key in keys { parts.append(.text(key)) }
        for argument in arguments { parts.append(.text(argument)) }
        return RedisCommand(parts: parts)
    }

    private func sendAll(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        commands.count == 1 ? [try await execute(commands[0])] : try await pipeline(commands)
    }
}

/// How many replicas must confirm a write before it is acknowledged, and how long to wait for them.
public struct RedisReplication: Sendable, Equatable {
    public var replicas: Int
    public var timeout: Duration

    public init(replicas: Int, timeout: Duration) {
        self.replicas = replicas
        self.timeout = timeout
    }
}
