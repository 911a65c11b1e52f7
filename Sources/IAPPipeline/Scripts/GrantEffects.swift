/// The Lua that every script granting a purchase shares (`grant_purchases`,
/// `release_held_purchase`): what a new grant does beyond its record and its fulfilment entry.
enum GrantEffects {
    /// `grantEffects(p, g, now, stream)`, after the grant record is written; `g` holds the grant's
    /// `user_id`, `unit`, `transaction_id`, `original_transaction_id`, `product_id`, `environment`,
    /// and optionally `app_account_token`, `kind`, `entitlements` (comma-separated), `expires_at`,
    /// `signed_at`:
    /// - binds the original transaction and the app account token to the user when nobody holds them;
    /// - forgets the purchase as unclaimed;
    /// - a non-consumable: adds the unit to the user's lifetime purchases (`lifetime:<user>`);
    /// - a subscription period: `applySubscription` with the period's status (`active` until
    ///   `expires_at`, else `expired`).
    ///
    /// `applySubscription(p, s, now, stream)` updates `subscription:<original_transaction_id>` in
    /// signed-time order: news older (`signed_at`) than what made the record is ignored (`stale`),
    /// as is a grant of a period that ends before the record's, and, with `require_latest` (a
    /// refund), news about another transaction than the record's latest (`not_latest`). The
    /// record keeps its first user (the owner); without a record and a user it is
    /// `unknown_subscription`. Absent `status`, `expires_at`, `product_id`, `entitlements` keep the record's. When the status or the product changes while the subscription is or was on
    /// (`active`, `grace_period`), one `entitlement_changed` entry per entitlement goes to the
    /// fulfilment stream (a change of product ends the old product's, status `ended`), and one
    /// `expired` entry when a known subscription expires.
    static let lua = """
        -- The re-check schedule (`RecheckSchedule.json`), set by a script from its arguments
        -- (`recheckPolicy = a.recheck`); absent: no subscription is scheduled.
        local recheckPolicy = nil

        -- When subscription `otx` (record `key`) is next asked about: `before_ms` before its period
        -- ends while active, `after_ms` after it ended, then waits doubling from `after_ms` (at
        -- least a second, at most `longest_ms`) for `max_tries` more tries (for ever while we
        -- believe it active); never once a re-check found it expired, or it was revoked. An
        -- `EXPIRED` notification gets one closing re-check `after_ms` later; a late grant of a
        -- period that is over is not Apple saying it ended: it is asked about. `reset`: a new
        -- period, whose tries count from zero.
        local function scheduleRecheck(p, key, otx, status, expires, now, reset, cause)
          local r = recheckPolicy
          if not r then return end
          local zset = p .. 'rechecks'
          -- A re-check's answer that it ended settles it. A notification that it expired gets one
          -- closing re-check (it fills any period a lost notification skipped); a grant of a
          -- period that is over only says that period is.
          local settled = status == 'revoked' or (status == 'expired' and cause == 'recheck')
          if settled or not expires or expires == '' then
            redis.call('ZREM', zset, otx)
            redis.call('HDEL', key, 'recheck_tries')
            return
          end
          local tries = 0
          if reset then redis.call('HDEL', key, 'recheck_tries') else tries = tonumber(redis.call('HGET', key, 'recheck_tries') or '0') end
          local e, n, before, after = tonumber(expires), tonumber(now), tonumber(r.before_ms), tonumber(r.after_ms)
          local due
          if status == 'expired' and cause ~= 'grant' then
            due = n + math.max(after, 1000)
          elseif status == 'active' and n < e - before then
            due = e - before
          elseif n < e + after then
            due = e + after
          else
            -- Only a subscription Apple holds in billing retry is let go; one we believe active is
            -- asked about again (at most a day apart) until Apple settles it.
            if tries >= 2 + tonumber(r.max_tries) and status ~= 'active' then
              redis.call('ZREM', zset, otx)
              return
            end
            due = n + math.min(math.max(after, 1000) * 2 ^ math.max(tries - 2, 0), tonumber(r.longest_ms))
          end
          redis.call('ZADD', zset, string.format('%.0f', due), otx)
        end

        local function split(text)
          local items = {}
          for item in string.gmatch(text or '', '[^,]+') do items[#items + 1] = item end
          return items
        end

        local function applySubscription(p, s, now, stream)
          local key = p .. 'subscription:' .. s.original_transaction_id
          local old = redis.call('HMGET', key, 'event_at', 'status', 'product_id', 'entitlements', 'user_id', 'expires_at',
            'latest_transaction_id')
          if not old[5] and not s.user_id then return 'unknown_subscription' end
          if old[1] and tonumber(old[1]) > tonumber(s.signed_at) then
            -- Older news leaves the status alone, but a later period's grant still extends what the
            -- record knows of its periods (its end and latest transaction): a DID_RENEW that comes
            -- after the EXPIRED of the period it started.
            if s.cause == 'grant' and old[6] and old[6] ~= '' and s.expires_at and s.expires_at ~= ''
              and tonumber(s.expires_at) > tonumber(old[6]) then
              redis.call('HSET', key, 'expires_at', s.expires_at, 'latest_transaction_id', s.transaction_id, 'updated_at', now)
            end
            return 'stale'
          end
          if s.cause == 'grant' and old[6] and old[6] ~= '' and s.expires_at ~= '' and tonumber(old[6]) > tonumber(s.expires_at)
            and old[2] ~= 'revoked' then
            return 'older_period'
          end
          if s.require_latest and old[7] and old[7] ~= s.transaction_id then return 'not_latest' end
          if not s.status then
            if not old[2] then return 'unknown_subscription' end
            s.status = old[2]
          end
          local user = old[5] or s.user_id
          local expires = s.expires_at
          if not expires or expires == '' then expires = old[6] or '' end
          local product = s.product_id or old[3]
          local entitlements = s.entitlements
          if not entitlements or (product == old[3] and entitlements == '') then entitlements = old[4] or '' end
          s.expires_at, s.product_id, s.entitlements = expires, product, entitlements
          redis.call('HSET', key, 'user_id', user, 'product_id', product, 'status', s.status, 'expires_at', expires,
            'event_at', s.signed_at, 'cause', s.cause, 'latest_transaction_id', s.transaction_id or old[7] or '',
            'entitlements', entitlements, 'environment', s.environment or '', 'updated_at', now)
          if s.grace_expires_at and s.grace_expires_at ~= '' then
            redis.call('HSET', key, 'grace_expires_at', s.grace_expires_at)
          else
            redis.call('HDEL', key, 'grace_expires_at')
          end
          if s.auto_renew then redis.call('HSET', key, 'auto_renew', s.auto_renew) end
          scheduleRecheck(p, key, s.original_transaction_id, s.status, expires, now, old[6] ~= expires, s.cause)
          redis.call('SADD', p .. 'user-subscriptions:' .. user, s.original_transaction_id)
          local function changed(entitlement, status, product)
            redis.call('XADD', stream, '*', 'event', 'entitlement_changed', 'source', s.source or s.cause, 'user_id', user,
              'entitlement', entitlement, 'status', status, 'product_id', product,
              'original_transaction_id', s.original_transaction_id, 'expires_at', s.expires_at, 'changed_at', now)
          end
          local wasOn = old[2] == 'active' or old[2] == 'grace_period'
          local isOn = s.status == 'active' or s.status == 'grace_period'
          if old[3] and old[3] ~= s.product_id and wasOn then
            local kept = {}
            if isOn then
              for _, e in ipairs(split(s.entitlements)) do kept[e] = true end
            end
            for _, e in ipairs(split(old[4])) do
              if not kept[e] then changed(e, 'ended', old[3]) end
            end
          end
          if (wasOn or isOn) and (old[2] ~= s.status or old[3] ~= s.product_id) then
            for _, e in ipairs(split(s.entitlements)) do changed(e, s.status, s.product_id) end
          end
          if s.status == 'expired' and old[2] and old[2] ~= 'expired' then
            redis.call('XADD', stream, '*', 'event', 'expired', 'source', s.source or s.cause, 'user_id', user,
              'product_id', s.product_id, 'original_transaction_id', s.original_transaction_id, 'expires_at', s.expires_at,
              'changed_at', now)
          end
          return 'applied'
        end

        -- One `entitlement_changed` entry per entitlement (comma-separated) for one user.
        local function announce(stream, user, entitlements, status, product, original, expires, now, source)
          for _, e in ipairs(split(entitlements)) do
            redis.call('XADD', stream, '*', 'event', 'entitlement_changed', 'source', source, 'user_id', user,
              'entitlement', e, 'status', status, 'product_id', product, 'original_transaction_id', original,
              'expires_at', expires or '', 'changed_at', now)
          end
        end

        -- IAP_SHARING_POLICY, when `user` proves a purchase whose grant (`record`) another user holds:
        -- `transfer` moves the grant, its claim, its owner and its entitlements to `user` (the
        -- holder's `revoked` with reason `transferred`, the new owner's `granted`); `share` gives
        -- `user` its entitlements too. Returns the purchase's outcome and reason.
        local function sharePurchase(p, a, purchase, claim, record, now, stream)
          -- A consumable (no kind) is a plain duplicate without a read.
          if not purchase.kind or not a.sharing then return 'duplicate', '' end
          local holder = redis.call('HGET', record, 'user_id')
          local user, unit, otx = a.user_id, purchase.unit, purchase.original_transaction_id
          if not holder or holder == user then return 'duplicate', '' end
          local on, status, expires = true, 'active', ''
          if purchase.kind == 'auto_renewable' then
            local sub = redis.call('HMGET', p .. 'subscription:' .. otx, 'status', 'expires_at')
            status, expires = sub[1] or 'active', sub[2] or ''
            on = status == 'active' or status == 'grace_period'
          end
          if a.sharing == 'transfer' then
            local g = redis.call('HMGET', record, 'ticket', 'product_id', 'quantity', 'transaction_id', 'environment', 'granted_at')
            redis.call('HSET', record, 'user_id', user, 'ticket', a.ticket, 'transferred_from', holder, 'transferred_at', now)
            redis.call('SET', claim, a.ticket)
            redis.call('XADD', stream, '*', 'event', 'revoked', 'source', a.source, 'ticket', g[1], 'user_id', holder,
              'product_id', g[2], 'quantity', g[3], 'transaction_id', g[4], 'original_transaction_id', otx,
              'environment', g[5], 'unit', unit, 'granted_at', g[6], 'revoked_at', now, 'revocation_reason', 'transferred')
            redis.call('XADD', stream, '*', 'event', 'granted', 'source', a.source, 'ticket', a.ticket, 'user_id', user,
              'product_id', g[2], 'quantity', g[3], 'transaction_id', g[4], 'original_transaction_id', otx,
              'environment', g[5], 'unit', unit, 'granted_at', now, 'transferred_from', holder)
            redis.call('SET', p .. 'owner:' .. otx, user)
            if purchase.kind == 'non_consumable' then
              redis.call('SREM', p .. 'lifetime:' .. holder, unit)
              redis.call('SADD', p .. 'lifetime:' .. user, unit)
            else
              redis.call('HSET', p .. 'subscription:' .. otx, 'user_id', user)
              redis.call('SREM', p .. 'user-subscriptions:' .. holder, otx)
              redis.call('SADD', p .. 'user-subscriptions:' .. user, otx)
            end
            if on then
              announce(stream, holder, purchase.entitlements, 'ended', purchase.product_id, otx, expires, now, a.source)
              announce(stream, user, purchase.entitlements, status, purchase.product_id, otx, expires, now, a.source)
            end
            return 'granted', ''
          elseif a.sharing == 'share' then
            local added
            if purchase.kind == 'non_consumable' then
              added = redis.call('SADD', p .. 'lifetime:' .. user, unit)
            else
              added = redis.call('SADD', p .. 'user-subscriptions:' .. user, otx)
            end
            if added == 1 and on then
              announce(stream, user, purchase.entitlements, status, purchase.product_id, otx, expires, now, a.source)
            end
            return 'duplicate', 'shared'
          end
          return 'duplicate', 'owned_by_another_account'
        end

        local function grantEffects(p, g, now, stream)
          redis.call('SET', p .. 'owner:' .. g.original_transaction_id, g.user_id, 'NX')
          if g.app_account_token and g.app_account_token ~= '' then
            redis.call('SET', p .. 'account-token:' .. g.app_account_token, g.user_id, 'NX')
          end
          redis.call('HDEL', p .. 'unclaimed', g.transaction_id)
          if g.kind == 'non_consumable' then
            redis.call('SADD', p .. 'lifetime:' .. g.user_id, g.unit)
          elseif g.kind == 'auto_renewable' then
            local expires = g.expires_at or ''
            local status = 'active'
            if expires ~= '' and tonumber(expires) <= tonumber(now) then status = 'expired' end
            local signed = g.signed_at or ''
            if signed == '' then signed = now end
            applySubscription(p, {original_transaction_id = g.original_transaction_id, user_id = g.user_id,
              product_id = g.product_id, status = status, expires_at = expires, signed_at = signed, cause = 'grant',
              source = g.source, transaction_id = g.transaction_id, entitlements = g.entitlements,
              environment = g.environment}, now, stream)
          end
        end

        """
}
