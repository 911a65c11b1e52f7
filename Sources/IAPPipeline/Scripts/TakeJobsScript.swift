import PlainJSON
import RedisClient

extension PipelineScripts {
    /// A worker with free slots takes up to `max` jobs at once, oldest first, from its stage's queue
    /// into its own in-flight list: what BLMOVE does for one, without blocking. The worker blocks
    /// (BLMOVE) only when this finds the queue empty.
    /// KEYS: the stage's queue, the worker's in-flight list. ARGV[1]: `TakeJobsArguments` as JSON.
    /// Returns the jobs taken, oldest first (none when the queue is empty).
    static let takeJobs = RedisScript(name: "take_jobs", source: """
        local a = cjson.decode(ARGV[1])
        local taken = {}
        for i = 1, tonumber(a.max) do
          local job = redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
          if not job then break end
          taken[i] = job
        end
        return taken
        """)
}

/// The named arguments of `take_jobs`.
struct TakeJobsArguments: ScriptArguments {
    /// How many jobs at most (a string: cjson reads numbers as doubles).
    var max: String

    var json: JSONValue { .object(["max": .string(max)]) }
}
