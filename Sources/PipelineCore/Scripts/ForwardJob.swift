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
        arguments = [JSONValue.object(["jobs": .array(jobs.map { job in
            .object([
                "taken": .string(job.payload), "next": .string(job.next.encoded()),
                "fields": .array(job.ticketFields.flatMap { [JSONValue.string($0.0), .string($0.1)] }),
            ])
        })]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> [TransitionResult] { try TransitionResult.each(of: reply, script: name) }
}
