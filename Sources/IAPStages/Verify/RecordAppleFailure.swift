import PipelineCore
import PlainJSON
import RedisClient

/// `record_apple_failure`: an Apple-side failure of a verify job, told to the fleet's breaker;
/// whether it spends the job's attempt, and whether the breaker is (now) open.
package struct RecordAppleFailure: PipelineScript {
    package static let script = LuaSource.script("record_apple_failure")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, service: AppleService, reason: String, failedBefore: Int64?, settings: AppleBreakerSettings, now: Int64?) {
        self.keys = [keys.appleBreaker(service)]
        arguments = [JSONValue.object([
            "reason": .string(reason), "failed_before": failedBefore.map { .string(String($0)) } ?? .null,
            "min_failures": .string(String(settings.minFailures)), "quiet_ms": .string(String(settings.quiet.milliseconds)),
            "probe_ms": .string(String(settings.probe.milliseconds)), "now": pinnedNow(now),
        ]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> AppleFailureVerdict {
        guard let items = reply.array?.compactMap(\.int), items.count == 3, (0...1).contains(items[0]),
            let state = AppleFailureVerdict.State(rawValue: Int(items[1]))
        else { throw ScriptReplyError(script: name, reply: reply) }
        return AppleFailureVerdict(spends: items[0] == 1, state: state, at: items[2])
    }
}

/// What the breaker made of one Apple-side failure.
package struct AppleFailureVerdict: Sendable, Equatable {
    package enum State: Int, Sendable { case closed = 0, opened = 1, open = 2 }
    /// Whether the job spends an attempt (Apple answered others since it last failed).
    package var spends: Bool
    package var state: State
    /// When it failed, Redis's ms: the job carries it to its next failure.
    package var at: Int64

}
