import Foundation
import PipelineCore
import PlainJSON
import RedisClient

/// `take_api_permit`: one App Store Server API call from the fleet's budget.
package struct TakeAPIPermit: PipelineScript {
    package static let script = LuaSource.script("take_api_permit")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, environment: String, endpoint: String, limit: Int, window: Duration) {
        self.keys = [keys.apiPermits(environment: environment, endpoint: endpoint), keys.apiHold(environment: environment, endpoint: endpoint)]
        arguments = [JSONValue.object([
            "limit": .int(limit), "window_ms": .int(window.milliseconds), "call": .string(UUID().uuidString),
        ]).canonicalText]
    }

    /// 0 when granted, else the milliseconds to wait.
    package static func decode(_ reply: RedisReply) throws -> Int64 {
        guard let wait = reply.int, wait >= 0 else { throw ScriptReplyError(script: name, reply: reply) }
        return wait
    }
}
