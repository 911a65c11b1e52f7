import RedisClient

/// How a transition script ended.
public enum TransitionResult: Sendable, Equatable {
    /// The job moved.
    case moved
    /// The worker no longer holds the job (the reaper took it back): nothing moved.
    case leaseLost
    /// The ticket hash is gone: nothing moved; the job should be dead-lettered.
    case ticketMissing

    init(_ code: Int64?) {
        switch code {
        case 1: self = .moved
        case -1: self = .ticketMissing
        default: self = .leaseLost
        }
    }

    /// One result per job from a script that moved a batch.
    static func each(of reply: RedisReply, expected: Int, script: String) throws -> [TransitionResult] {
        let results = (reply.array ?? []).map { TransitionResult($0.int) }
        guard results.count == expected else { throw RedisError.unexpectedReply("\(script): \(reply)") }
        return results
    }
}
