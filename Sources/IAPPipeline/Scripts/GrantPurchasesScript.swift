import PlainJSON
import RedisClient

extension PipelineScripts {
    /// Grant stage, one step per job: for each purchase this ticket owns the claim of, write the
    /// grant record if it does not exist and add it to the fulfilment stream only then (event
    /// `granted`); bind the purchase's original transaction id and app account token to the user
    /// when nobody holds them yet; forget it as unclaimed; set the ticket's final status and
    /// transactions; publish; ack. A purchase Apple refunded before its grant (a refund marker)
    /// is rejected as `refunded` and its claim released. Running it twice grants nothing twice.
    ///
    /// The purchase policy's counted rules are applied here, in the step that would grant: a user
    /// with `refund_limit` refunds, or a purchase over its product's `daily_limit` in the user's
    /// rolling 24 hours (`daily:<user>:<product>`, one member per granted unit), is held instead:
    /// a hold record (`held:<unit>`, indexed in `held`), one `held` entry on the fulfilment stream,
    /// the ticket `held`. A purchase the dedupe stage held (currency) is held the same way. The
    /// claim stays with the ticket while it is held; `release_held_purchase` grants it.
    ///
    /// A subscription's later period is granted to the subscription's owner (`owner:<original>`)
    /// whoever sends it: another account's ticket gets `duplicate`, `owned_by_another_account`.
    /// A non-consumable or subscription another user was granted follows `sharing`
    /// (`IAP_SHARING_POLICY`, see `sharePurchase`): `duplicate` with reason
    /// `owned_by_another_account` (`bind`), granted to this user instead (`transfer`), or
    /// `duplicate` with reason `shared` and its entitlements (`share`).
    /// KEYS: in-flight list, ticket key, fulfilment stream, then (claim key, grant key) per claimed purchase.
    /// ARGV[1]: the job as taken; ARGV[2]: `GrantPurchasesArguments` as JSON.
    /// Returns `{1, status}`, `{0}` when the worker no longer holds the job, `{-1}` when the ticket is gone.
    static let grantPurchases = RedisScript(name: "grant_purchases", source: GrantEffects.lua + """
        if redis.call('EXISTS', KEYS[2]) == 0 then return {-1} end
        if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return {0} end
        local a = cjson.decode(ARGV[2])
        recheckPolicy = a.recheck
        local ticket, now, user, environment, p = a.ticket, a.now, a.user_id, a.environment, a.prefix
        local granted, duplicates, held, reason = 0, 0, 0, nil
        local refunds = 0
        if a.refund_limit then refunds = tonumber(redis.call('GET', p .. 'refunds:' .. user) or '0') end
        local results = {}
        local k = 4
        for _, purchase in ipairs(a.purchases) do
          local outcome, why = purchase.outcome, purchase.reason or ''
          local tx, otx, product, quantity, unit =
            purchase.transaction_id, purchase.original_transaction_id, purchase.product_id, purchase.quantity, purchase.unit
          if outcome == 'pending' or outcome == 'held' then
            local claim, record, hold = KEYS[k], KEYS[k + 1], p .. 'held:' .. unit
            k = k + 2
            local owner = redis.call('GET', claim)
            if not owner then
              redis.call('SET', claim, ticket)
              owner = ticket
            end
            if owner ~= ticket then
              outcome, why = sharePurchase(p, a, purchase, claim, record, now, KEYS[3])
            elseif redis.call('EXISTS', record) == 1 then
              local r = redis.call('HMGET', record, 'ticket', 'user_id')
              if r[1] ~= ticket then
                outcome = 'duplicate'
              elseif r[2] == user then
                outcome = 'granted'
              else
                outcome, why = 'duplicate', 'owned_by_another_account'
              end
            elseif (outcome == 'held' or a.refund_limit or purchase.daily_limit) and redis.call('HGET', hold, 'ticket') == ticket then
              -- Held by an earlier run of this job: as it stands (still held, or rejected by an operator).
              -- Only a purchase a rule could hold has a hold to look for: no extra read on the common path.
              local h = redis.call('HMGET', hold, 'status', 'reason')
              if h[1] == 'rejected' then outcome = 'rejected' else outcome = 'held' end
              why = h[2] or why
            elseif redis.call('EXISTS', p .. 'refunded:' .. unit) == 1 then
              -- Apple refunded it before we granted it: nothing to grant; a reversal can still let it through.
              redis.call('DEL', claim)
              outcome, why = 'rejected', 'refunded'
            else
              if outcome == 'pending' then
                if a.refund_limit and refunds >= tonumber(a.refund_limit) then
                  outcome, why = 'held', 'refund_limit_exceeded'
                elseif purchase.daily_limit then
                  local window = p .. 'daily:' .. user .. ':' .. product
                  redis.call('ZREMRANGEBYSCORE', window, '-inf', string.format('%.0f', tonumber(now) - 86400000))
                  if redis.call('ZCARD', window) >= tonumber(purchase.daily_limit) then
                    outcome, why = 'held', 'daily_limit_exceeded'
                  else
                    redis.call('ZADD', window, now, unit)
                    redis.call('PEXPIRE', window, 86400000)
                  end
                end
              end
              if outcome == 'held' then
                redis.call('HSET', hold, 'status', 'held', 'reason', why, 'ticket', ticket, 'user_id', user,
                  'product_id', product, 'quantity', quantity, 'transaction_id', tx, 'original_transaction_id', otx,
                  'environment', environment, 'unit', unit, 'held_at', now, 'source', a.source,
                  'currency', purchase.currency or '', 'app_account_token', purchase.app_account_token or '',
                  'kind', purchase.kind or '', 'entitlements', purchase.entitlements or '',
                  'expires_at', purchase.expires_at or '', 'signed_at', purchase.signed_at or '')
                redis.call('ZADD', p .. 'held', now, unit)
                redis.call('XADD', KEYS[3], '*', 'event', 'held', 'source', a.source, 'ticket', ticket,
                  'user_id', user, 'product_id', product, 'quantity', quantity, 'transaction_id', tx,
                  'original_transaction_id', otx, 'environment', environment, 'unit', unit, 'held_at', now, 'reason', why)
              else
                -- A subscription's later period belongs to the subscription's owner, whoever sends it.
                local grantee = user
                if purchase.kind == 'auto_renewable' and tx ~= otx then
                  grantee = redis.call('GET', p .. 'owner:' .. otx) or user
                end
                redis.call('HSET', record, 'ticket', ticket, 'user_id', grantee, 'product_id', product,
                  'quantity', quantity, 'transaction_id', tx, 'original_transaction_id', otx,
                  'environment', environment, 'unit', unit, 'granted_at', now, 'source', a.source)
                -- A subscription's later period (a new transaction of the same original) is a renewal.
                local event = 'granted'
                if purchase.kind == 'auto_renewable' and tx ~= otx then event = 'renewed' end
                local fields = {'event', event, 'source', a.source, 'ticket', ticket,
                  'user_id', grantee, 'product_id', product, 'quantity', quantity, 'transaction_id', tx,
                  'original_transaction_id', otx, 'environment', environment, 'unit', unit, 'granted_at', now}
                if purchase.expires_at then
                  fields[#fields + 1] = 'expires_at'
                  fields[#fields + 1] = purchase.expires_at
                end
                redis.call('XADD', KEYS[3], '*', unpack(fields))
                grantEffects(p, {user_id = grantee, unit = unit, transaction_id = tx, original_transaction_id = otx,
                  product_id = product, environment = environment, source = a.source,
                  app_account_token = purchase.app_account_token, kind = purchase.kind,
                  entitlements = purchase.entitlements, expires_at = purchase.expires_at, signed_at = purchase.signed_at},
                  now, KEYS[3])
                if grantee == user then outcome = 'granted' else outcome, why = 'duplicate', 'owned_by_another_account' end
              end
            end
          end
          if outcome == 'granted' then granted = granted + 1
          elseif outcome == 'duplicate' then duplicates = duplicates + 1
          elseif outcome == 'held' then held = held + 1
          elseif not reason and why ~= '' then reason = why end
          local entry = {transaction_id = tx, original_transaction_id = otx, product_id = product,
            quantity = tonumber(quantity), outcome = outcome}
          if why ~= '' and outcome ~= 'granted' then entry.reason = why end
          results[#results + 1] = cjson.encode(entry)
        end
        -- A legacy receipt of subscriptions this user owns: kept for re-checks by verifyReceipt.
        if a.receipt then
          for _, purchase in ipairs(a.purchases) do
            if purchase.kind == 'auto_renewable' then
              local key = p .. 'subscription:' .. purchase.original_transaction_id
              if redis.call('HGET', key, 'user_id') == user then redis.call('HSET', key, 'receipt', a.receipt) end
            end
          end
        end
        -- A re-check's answer: the subscription as Apple says it is now, after any new period's grant.
        if a.subscription then
          redis.call('HSET', KEYS[2], 'subscription', applySubscription(p, a.subscription, now, KEYS[3]))
        end
        local status = 'rejected'
        if held > 0 then status = 'held' elseif granted > 0 then status = 'granted' elseif duplicates > 0 then status = 'duplicate' end
        redis.call('HSET', KEYS[2], 'status', status, 'transactions', '[' .. table.concat(results, ',') .. ']',
          'environment', environment, 'updated_at', now)
        if status == 'rejected' then
          redis.call('HSET', KEYS[2], 'reason', reason or 'no_purchases')
        else
          redis.call('HDEL', KEYS[2], 'reason')
        end
        redis.call('PUBLISH', a.channel, ticket)
        return {1, status}
        """)
}

/// The named arguments of `grant_purchases`.
struct GrantPurchasesArguments: ScriptArguments {
    var ticket: String
    /// Numbers travel as strings where Redis stores them: cjson reads numbers as doubles.
    var now: String
    var channel: String
    var userID: String
    var environment: String
    var source: String
    var prefix: String
    /// `IAP_MAX_REFUNDS_PER_USER`; absent: no limit.
    var refundLimit: String?
    /// `IAP_SHARING_POLICY`: `bind`, `transfer` or `share`; absent: a plain duplicate.
    var sharing: String?
    var purchases: [Line]
    /// When the subscriptions this step moves are re-checked next.
    var recheck: RecheckSchedule?
    /// A re-check's answer: the subscription's state as Apple says it now, applied after the
    /// purchases (in signed-time order, like a notification).
    var subscription: SubscriptionChange?
    /// A legacy receipt proving the job's subscriptions: kept on the records this user owns.
    var receipt: String?

    struct Line {
        var transactionID: String
        var originalTransactionID: String
        var productID: String
        var quantity: String
        var unit: String?
        var outcome: String
        var reason: String?
        var appAccountToken: String?
        var currency: String?
        /// The catalog's `daily_limit_per_user` for the product; absent: no cap.
        var dailyLimit: String?
        var kind: String?
        /// Comma-separated.
        var entitlements: String?
        var expiresAt: String?
        var signedAt: String?

        var json: JSONValue {
            .members([
                "transaction_id": .string(transactionID),
                "original_transaction_id": .string(originalTransactionID),
                "product_id": .string(productID),
                "quantity": .string(quantity),
                "unit": unit.json,
                "outcome": .string(outcome),
                "reason": reason.json,
                "app_account_token": appAccountToken.json,
                "currency": currency.json,
                "daily_limit": dailyLimit.json,
                "kind": kind.json,
                "entitlements": entitlements.json,
                "expires_at": expiresAt.json,
                "signed_at": signedAt.json,
            ])
        }
    }

    var json: JSONValue {
        .members([
            "ticket": .string(ticket), "now": .string(now), "channel": .string(channel), "user_id": .string(userID),
            "environment": .string(environment), "source": .string(source), "prefix": .string(prefix),
            "refund_limit": refundLimit.json,
            "sharing": sharing.json,
            "purchases": .array(purchases.map(\.json)),
            "recheck": recheck?.json,
            "subscription": subscription?.json,
            "receipt": receipt.json,
        ])
    }
}
