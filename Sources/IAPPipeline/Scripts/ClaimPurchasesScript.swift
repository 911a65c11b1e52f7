import PlainJSON
import RedisClient

extension PipelineScripts {
    /// Dedupe stage: for each job, claim each grant unit for its ticket (`SET … NX`) and forward
    /// the job to grant: one job, or a batch of the worker's jobs (each as if alone). A unit
    /// already claimed by the same ticket (a redelivered job) stays claimed: nothing is lost.
    /// KEYS: `ClaimPurchasesLayout`: the in-flight list, the grant queue, then per job its ticket
    /// key followed by its `units` claim keys.
    /// ARGV[1]: `ClaimPurchasesArguments` as JSON: per job `taken`, `next`, `ticket`, `units` (how many claim keys).
    /// Returns per job 1, 0 when the worker no longer holds it, -1 when its ticket is gone.
    static let claimPurchases = RedisScript(name: "claim_purchases", source: """
        local a = cjson.decode(ARGV[1])
        local results = {}
        local cursor = 3
        for i, job in ipairs(a.jobs) do
          local ticketKey = KEYS[cursor]
          local units = tonumber(job.units)
          if redis.call('EXISTS', ticketKey) == 0 then
            results[i] = -1
          elseif redis.call('LREM', KEYS[1], 1, job.taken) == 0 then
            results[i] = 0
          else
            for k = cursor + 1, cursor + units do
              redis.call('SET', KEYS[k], job.ticket, 'NX')
            end
            redis.call('LPUSH', KEYS[2], job.next)
            results[i] = 1
          end
          cursor = cursor + 1 + units
        end
        return results
        """)
}

/// One job for `claim_purchases`.
struct ClaimedJob {
    var taken: String
    var next: String
    var ticket: String
    /// How many claim keys follow the ticket's key (a string: cjson reads numbers as doubles).
    var units: String

    var json: JSONValue {
        .object(["taken": .string(taken), "next": .string(next), "ticket": .string(ticket), "units": .string(units)])
    }
}

/// The named arguments of `claim_purchases`.
struct ClaimPurchasesArguments: ScriptArguments {
    var jobs: [ClaimedJob]

    var json: JSONValue { .object(["jobs": .array(jobs.map(\.json))]) }
}

/// The keys of `claim_purchases`: in-flight list, grant queue, then per job its ticket key and claim keys.
struct ClaimPurchasesLayout {
    var keys: [String]

    init(inflight: String, grantQueue: String, jobs: [(ticket: String, claims: [String])]) {
        keys = [inflight, grantQueue]
        for job in jobs { keys += [job.ticket] + job.claims }
    }
}
