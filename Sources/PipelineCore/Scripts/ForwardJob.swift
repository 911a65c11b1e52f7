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
            [job.payload, job.next.encoded(), Self.flatArray(job.ticketFields)]
        }
    }

    /// `[name, value, name, value, ...]`: the ticket's fields as the script reads them.
    private static func flatArray(_ fields: [(String, String)]) -> String {
        var json = JSONWriter(capacity: 64)
        json.openArray()
        for (name, value) in fields {
            json.string(name)
            json.string(value)
        }
        json.closeArray()
        return json.text
    }

    package static func decode(_ reply: RedisReply) throws -> [TransitionResult] { try TransitionResult.each(of: reply, script: name) }
}
