import PipelineCore
import PlainJSON
import RedisClient

/// `count_subscription`: one subscription's record counted in its bucket's live count of
/// subscribers (`iapctl report recount --repair`).
package struct CountSubscription: PipelineScript {
    package static let script = LuaSource.script("count_subscription")
    package let keys: [String]
    package let arguments: [String] = []

    /// `record`: the record's key as its bucket names it (a page of `SCAN`); `bucket`: that bucket's keys.
    package init(record: String, in bucket: RedisKeys) {
        keys = [record, bucket.subscribers]
    }

    /// `true` when the record was counted anew; `false` when it was already, or is gone.
    package static func decode(_ reply: RedisReply) throws -> Bool {
        guard let value = reply.int, (-1...1).contains(value) else { throw ScriptReplyError(script: name, reply: reply) }
        return value == 1
    }
}
