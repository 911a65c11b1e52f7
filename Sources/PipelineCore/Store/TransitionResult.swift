import RedisClient

/// How a step that ends a job the worker holds came out.
package enum TransitionResult: Sendable, Equatable {
    /// The job moved.
    case moved
    /// The worker no longer holds the job (the reaper took it back): nothing moved.
    case leaseLost
    /// The ticket hash is gone: nothing moved; the job should be dead-lettered.
    case ticketMissing

    /// The code every such script answers: 1, 0 or -1; any other is the script's error.
    init(code: Int64?, script: String) throws {
        switch code {
        case 1: self = .moved
        case 0: self = .leaseLost
        case -1: self = .ticketMissing
        default: throw ScriptReplyError(script: script, "the code \(code.map(String.init) ?? "nil")")
        }
    }

    /// A reply that is the code alone (`1`), or an array that starts with it (`{1, result}`).
    package init(_ reply: RedisReply, script: String) throws {
        if case .array(let items) = reply {
            try self.init(code: items.first?.int, script: script)
        } else {
            try self.init(code: reply.int, script: script)
        }
    }

    /// The result of each job of a script that moved a batch.
    package static func each(of reply: RedisReply, script: String) throws -> [TransitionResult] {
        guard let items = reply.array else { throw ScriptReplyError(script: script, reply: reply) }
        return try items.map { try TransitionResult(code: $0.int, script: script) }
    }
}
