import PipelineCore
import PlainJSON
import RedisClient

/// `take_apple_probe`: while an Apple breaker is open, one verify job of the fleet may ask that
/// service every probe interval.
package struct TakeAppleProbe: PipelineScript {
    package static let script = LuaSource.script("take_apple_probe")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, service: AppleService, probe: Duration, now: Int64?) {
        self.keys = [keys.appleBreaker(service)]
        arguments = [JSONValue.object(["probe_ms": .string(String(probe.milliseconds)), "now": pinnedNow(now)]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> ProbeTurn {
        guard let items = reply.array?.compactMap(\.int), items.count == 2 else { throw ScriptReplyError(script: name, reply: reply) }
        switch items[0] {
        case 0: return .closed
        case 1: return .probe
        case 2: return .wait(.milliseconds(max(items[1], 1)))
        default: throw ScriptReplyError(script: name, reply: reply)
        }
    }
}

/// A verify job's turn while a breaker may be open: the breaker is closed (ask as usual), this job
/// is the probe (ask), or the next probe is due in a while (do not ask).
package enum ProbeTurn: Sendable, Equatable {
    case closed
    case probe
    case wait(Duration)
}
