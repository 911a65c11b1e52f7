import PipelineCore
import PlainJSON
import RedisClient

/// `record_apple_answers`: verify jobs Apple answered, the latest `age` ago, told to the fleet's
/// breaker (an answer given after it opened closes it); 0 only reads whether it is open.
package struct RecordAppleAnswers: PipelineScript {
    package static let script = LuaSource.script("record_apple_answers")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, service: AppleService, count: Int, age: Duration, now: Int64?) {
        self.keys = [keys.appleBreaker(service)]
        arguments = [JSONValue.object([
            "count": .string(String(count)), "age_ms": .string(String(max(age.milliseconds, 0))), "now": pinnedNow(now),
        ]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> AppleAnswersRecorded {
        guard let items = reply.array?.compactMap(\.int), items.count == 3, (0...1).contains(items[0]), (0...1).contains(items[1])
        else { throw ScriptReplyError(script: name, reply: reply) }
        return AppleAnswersRecorded(open: items[0] == 1, closedAfter: items[1] == 1 ? .milliseconds(items[2]) : nil)
    }
}

/// The breaker after answers were told: open or not, and how long it had been open when these closed it.
package struct AppleAnswersRecorded: Sendable, Equatable {
    package var open: Bool
    package var closedAfter: Duration?

    package init(open: Bool, closedAfter: Duration?) {
        self.open = open
        self.closedAfter = closedAfter
    }
}
