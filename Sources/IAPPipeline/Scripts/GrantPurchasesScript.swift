import RedisClient

extension PipelineScripts {
    /// Grant stage, one step per job: for each purchase this ticket owns the claim of, write the
    /// grant record if it does not exist and add it to the fulfilment stream only then; set the
    /// ticket's final status and transactions; publish; ack. Running it twice grants nothing twice.
    /// KEYS: in-flight list, ticket key, fulfilment stream, then (claim key, grant key) per pending purchase.
    /// ARGV: job as taken, ticket, now, channel, user id, environment, purchase count,
    ///       then per purchase: transaction id, original id, product id, quantity, unit, outcome, reason.
    /// Returns `{1, status}`, `{0}` when the worker no longer holds the job, `{-1}` when the ticket is gone.
    static let grantPurchases = RedisScript(name: "grant_purchases", source: """
        if redis.call('EXISTS', KEYS[2]) == 0 then return {-1} end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return {0} end
        local ticket, now, user, environment = ARGV[2], ARGV[3], ARGV[5], ARGV[6]
        local granted, duplicates, reason = 0, 0, nil
        local results = {}
        local k = 4
        for i = 0, tonumber(ARGV[7]) - 1 do
          local b = 8 + i * 7
          local tx, otx, product, quantity, unit, outcome, why =
            ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], ARGV[b + 5], ARGV[b + 6]
          if outcome == 'pending' then
            local claim, record = KEYS[k], KEYS[k + 1]
            k = k + 2
            local owner = redis.call('GET', claim)
            if not owner then
              redis.call('SET', claim, ticket)
              owner = ticket
            end
            if owner ~= ticket then
              outcome = 'duplicate'
            elseif redis.call('EXISTS', record) == 1 then
              if redis.call('HGET', record, 'ticket') == ticket then outcome = 'granted' else outcome = 'duplicate' end
            else
              redis.call('HSET', record, 'ticket', ticket, 'user_id', user, 'product_id', product,
                'quantity', quantity, 'transaction_id', tx, 'original_transaction_id', otx,
                'environment', environment, 'unit', unit, 'granted_at', now)
              redis.call('XADD', KEYS[3], '*', 'ticket', ticket, 'user_id', user, 'product_id', product,
                'quantity', quantity, 'transaction_id', tx, 'original_transaction_id', otx,
                'environment', environment, 'unit', unit, 'granted_at', now)
              outcome = 'granted'
            end
          end
          if outcome == 'granted' then granted = granted + 1
          elseif outcome == 'duplicate' then duplicates = duplicates + 1
          elseif not reason and why ~= '' then reason = why end
          local entry = {transaction_id = tx, original_transaction_id = otx, product_id = product,
            quantity = tonumber(quantity), outcome = outcome}
          if why ~= '' and outcome == 'rejected' then entry.reason = why end
          results[#results + 1] = cjson.encode(entry)
        end
        local status = 'rejected'
        if granted > 0 then status = 'granted' elseif duplicates > 0 then status = 'duplicate' end
        redis.call('HSET', KEYS[2], 'status', status, 'transactions', '[' .. table.concat(results, ',') .. ']',
          'environment', environment, 'updated_at', now)
        if status == 'rejected' then
          redis.call('HSET', KEYS[2], 'reason', reason or 'no_purchases')
        else
          redis.call('HDEL', KEYS[2], 'reason')
        end
        redis.call('PUBLISH', ARGV[4], ticket)
        return {1, status}
        """)
}
