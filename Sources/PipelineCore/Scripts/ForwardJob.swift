import PlainJSON
import RedisClient

/// `forward_job`: jobs of one worker onto their next stages' queues, each as if alone.
package struct ForwardJob: PipelineScript {
    package static let script = LuaSource.script("forward_job")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, member: String, jobs: [PipelineStore.Forward]) {
        var list = [keys.inflight(member: member)]
        for job in jobs { list += [keys.queue(job.next.stage), keys.ticket(job.next.ticket)] }
        self.keys = list
        // The jobs go as they are, three arguments each: inside one JSON document they were escaped
        // here and unescaped by Redis, about a twentieth of a verifier's instructions.
        arguments = jobs.flatMap { job in
            [job.payload, job.next.encoded(), JSONValue.array(job.ticketFields.flatMap { [JSONValue.string($0.0), .string($0.1)] }).canonicalText]
        }
    }

    package static func decode(_ reply: RedisReply) throws -> [TransitionResult] { try TransitionResult.each(of: reply, script: name) }
}
