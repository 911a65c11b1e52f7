import PipelineCore
import PlainJSON
import RedisClient

/// `hold_api_endpoint`: an App Store Server API endpoint held fleet-wide until Apple's Retry-After.
package struct HoldAPIEndpoint: PipelineScript {
    package static let script = LuaSource.script("hold_api_endpoint")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, environment: String, endpoint: String, untilMs: Int64) {
        self.keys = [keys.apiHold(environment: environment, endpoint: endpoint)]
        arguments = [JSONValue.object(["until_ms": .string(String(untilMs))]).canonicalText]
    }

    /// The hold in force (UNIX ms).
    package static func decode(_ reply: RedisReply) throws -> Int64 {
        guard let until = reply.int else { throw ScriptReplyError(script: name, reply: reply) }
        return until
    }
}
