import PlainJSON
import RedisClient

extension PipelineScripts {
    /// Ack jobs from the worker's in-flight list and push each one's next form onto its next
    /// stage's queue, setting fields on its ticket: one job, or a batch of the worker's jobs
    /// (each moves or not on its own, as if alone).
    /// KEYS: `ForwardJobsLayout`: the in-flight list, then per job its next queue and its ticket key.
    /// ARGV[1]: `ForwardJobsArguments` as JSON: per job `taken` (as taken), `next`, `fields`
    /// (field/value pairs for the ticket).
    /// Returns per job 1 when moved, 0 when the worker no longer holds it, -1 when its ticket is gone.
    static let forwardJob = RedisScript(name: "forward_job", source: """
        local a = cjson.decode(ARGV[1])
        local results = {}
        for i, job in ipairs(a.jobs) do
          local queue, ticket = KEYS[2 * i], KEYS[2 * i + 1]
          if redis.call('EXISTS', ticket) == 0 then
            results[i] = -1
          elseif redis.call('LREM', KEYS[1], 1, job.taken) == 0 then
            results[i] = 0
          else
            redis.call('LPUSH', queue, job.next)
            if #job.fields > 0 then redis.call('HSET', ticket, unpack(job.fields)) end
            results[i] = 1
          end
        end
        return results
        """)
}

/// One job for `forward_job`.
struct ForwardedJob {
    var taken: String
    var next: String
    var fields: [String]

    var json: JSONValue {
        .object(["taken": .string(taken), "next": .string(next), "fields": .array(fields.map(JSONValue.string))])
    }
}

/// The named arguments of `forward_job`.
struct ForwardJobsArguments: ScriptArguments {
    var jobs: [ForwardedJob]

    var json: JSONValue { .object(["jobs": .array(jobs.map(\.json))]) }
}

/// The keys of `forward_job`: the in-flight list, then per job (next queue, ticket).
struct ForwardJobsLayout {
    var keys: [String]

    init(inflight: String, jobs: [(queue: String, ticket: String)]) {
        keys = [inflight]
        for job in jobs { keys += [job.queue, job.ticket] }
    }
}
