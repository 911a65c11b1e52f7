import PlainJSON

/// What `release_held_purchase` and `reject_held_purchase` share: their keys, their arguments and
/// the Lua that reads a hold and settles its ticket.
enum HeldPurchaseDecision {
    /// Reads the hold (KEYS[1]) into `h`, or returns `{-1}` when there is none and `{0, status}`
    /// when an operator decided it already.
    static let readHold = """
        local a = cjson.decode(ARGV[1])
        recheckPolicy = a.recheck
        local p = a.prefix
        local fields = redis.call('HGETALL', KEYS[1])
        if #fields == 0 then return {-1} end
        local h = {}
        for i = 1, #fields, 2 do h[fields[i]] = fields[i + 1] end
        if h.status ~= 'held' then return {0, h.status} end
        """

    /// `settle(outcome, why)`: records the decision on the hold, takes it off the index, and gives
    /// the ticket (if it has not expired) the purchase's new outcome and the status its purchases
    /// add up to: `held` while any is, else `granted`, `duplicate`, `rejected`.
    static let settle = """
        local function settle(outcome, why)
          local decision = outcome == 'granted' and 'released' or 'rejected'
          redis.call('HSET', KEYS[1], 'status', decision, 'decided_at', a.now, 'decided_by', a.operator,
            'decision_reason', why, 'note', a.note)
          redis.call('ZREM', KEYS[2], h.unit)
          local ticketKey = p .. 'ticket:' .. h.ticket
          local text = redis.call('HGET', ticketKey, 'transactions')
          if not text then return decision end
          local list = cjson.decode(text)
          local granted, duplicates, held, reason = 0, 0, 0, nil
          for _, entry in ipairs(list) do
            if entry.transaction_id == h.transaction_id and entry.outcome == 'held' then
              entry.outcome = outcome
              if outcome == 'rejected' then entry.reason = why else entry.reason = nil end
            end
            if entry.outcome == 'granted' then granted = granted + 1
            elseif entry.outcome == 'duplicate' then duplicates = duplicates + 1
            elseif entry.outcome == 'held' then held = held + 1
            elseif not reason and entry.reason then reason = entry.reason end
          end
          local status = 'rejected'
          if held > 0 then status = 'held' elseif granted > 0 then status = 'granted' elseif duplicates > 0 then status = 'duplicate' end
          redis.call('HSET', ticketKey, 'status', status, 'updated_at', a.now)
          if #list > 0 then redis.call('HSET', ticketKey, 'transactions', cjson.encode(list)) end
          if status == 'rejected' then redis.call('HSET', ticketKey, 'reason', reason or 'no_purchases')
          else redis.call('HDEL', ticketKey, 'reason') end
          redis.call('PUBLISH', a.channel, h.ticket)
          return decision
        end
        """

    /// The fields of a hold that a fulfilment entry about it repeats, as XADD arguments.
    static let entryFields = """
        'ticket', h.ticket, 'user_id', h.user_id, 'product_id', h.product_id, 'quantity', h.quantity,
        'transaction_id', h.transaction_id, 'original_transaction_id', h.original_transaction_id,
        'environment', h.environment, 'unit', h.unit, 'held_at', h.held_at, 'hold_reason', h.reason
        """
}

/// The named arguments of `release_held_purchase` and `reject_held_purchase`.
struct HeldPurchaseDecisionArguments: ScriptArguments {
    var now: String
    /// Who decided (audited on the hold and the fulfilment stream).
    var operatorName: String
    var note: String
    var channel: String
    var prefix: String
    var recheck: RecheckSchedule?

    var json: JSONValue {
        .members([
            "now": .string(now), "operator": .string(operatorName), "note": .string(note), "channel": .string(channel),
            "prefix": .string(prefix), "recheck": recheck?.json,
        ])
    }
}
