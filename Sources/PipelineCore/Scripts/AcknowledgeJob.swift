import RedisClient

/// `acknowledge_job`: a job acked whose outcome is recorded elsewhere (a part's, on its ticket).
package struct AcknowledgeJob: PipelineScript {
    package static let script = LuaSource.script("acknowledge_job")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, member: String, taken: String, ownTicket: String) {
        self.keys = [keys.inflight(member: member), keys.ticket(ownTicket)]
        arguments = [taken]
    }

    package static func decode(_ reply: RedisReply) throws -> TransitionResult { try TransitionResult(reply, script: name) }
}
