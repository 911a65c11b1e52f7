import RedisClient

/// `acknowledge_job`: a job acked whose outcome is recorded elsewhere (a part's, on its ticket).
struct AcknowledgeJob: PipelineScript {
    static let script = LuaSource.script("acknowledge_job", PackageResources.acknowledge_job_lua)
    let keys: [String]
    let arguments: [String]

    init(_ keys: RedisKeys, member: String, taken: String, ownTicket: String) {
        self.keys = [keys.inflight(member: member), keys.ticket(ownTicket)]
        arguments = [taken]
    }

    static func decode(_ reply: RedisReply) throws -> TransitionResult { try TransitionResult(reply, script: name) }
}
