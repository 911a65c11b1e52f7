import RedisClient

extension PipelineScripts {
    /// Dedupe stage: claim each grant unit for this ticket (`SET … NX`) and forward the job to grant.
    /// A unit already claimed by this ticket (a redelivered job) stays claimed: nothing is lost.
    /// KEYS: in-flight list, grant queue, ticket key, then one claim key per unit.
    /// ARGV: job as taken, job for the grant stage, ticket.
    /// Returns 1, 0 when the worker no longer holds the job, -1 when the ticket is gone.
    static let claimPurchases = RedisScript(name: "claim_purchases", source: """
        if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
        for i = 4, #KEYS do
          redis.call('SET', KEYS[i], ARGV[3], 'NX')
        end
        redis.call('LPUSH', KEYS[2], ARGV[2])
        return 1
        """)
}
