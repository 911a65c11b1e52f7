import PlainJSON
import RedisClient

/// `trim_fulfilment_stream`: a bucket's fulfilment stream trimmed past its retention, never below
/// what a consumer group or the refund sweep has yet to read.
package struct TrimFulfilmentStream: PipelineScript {
    package static let script = LuaSource.script("trim_fulfilment_stream")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, retention: Duration, floorMs: Int64?, limit: Int, now: Int64?) {
        self.keys = [keys.fulfilment]
        arguments = [JSONValue.object([
            "retention_ms": .string(String(retention.milliseconds)), "floor_ms": floorMs.map { .string(String($0)) } ?? .null,
            "limit": .string(String(limit)), "now": pinnedNow(now),
        ]).canonicalText]
    }

    /// How many entries went, and the id below which it trimmed.
    package static func decode(_ reply: RedisReply) throws -> (trimmed: Int, below: String) {
        guard let items = reply.array, items.count == 2, let trimmed = items[0].int, let below = items[1].string else {
            throw ScriptReplyError(script: name, reply: reply)
        }
        return (Int(trimmed), below)
    }
}
