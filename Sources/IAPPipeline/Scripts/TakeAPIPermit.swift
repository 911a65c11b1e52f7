import Foundation
import PlainJSON
import RedisClient

/// `take_api_permit`: one App Store Server API call from the fleet's budget.
struct TakeAPIPermit: PipelineScript {
    static let script = LuaSource.script("take_api_permit", PackageResources.take_api_permit_lua)
    let keys: [String]
    let arguments: [String]

    init(_ keys: RedisKeys, environment: String, endpoint: String, limit: Int, window: Duration) {
        self.keys = [keys.apiPermits(environment: environment, endpoint: endpoint), keys.apiHold(environment: environment, endpoint: endpoint)]
        arguments = [JSONValue.object([
            "limit": .int(limit), "window_ms": .int(window.milliseconds), "call": .string(UUID().uuidString),
        ]).canonicalText]
    }

    /// 0 when granted, else the milliseconds to wait.
    static func decode(_ reply: RedisReply) throws -> Int64 {
        guard let wait = reply.int, wait >= 0 else { throw ScriptReplyError(script: name, reply: reply) }
        return wait
    }
}
