import IAPSettings
import RedisClient

/// Every Redis key and channel the pipeline uses, in one place (docs/operations/redis-keys.md mirrors this, with the keys each script takes).
/// All start with the prefix (`IAP_PREFIX`, default `iap`; `{iap}` keeps them in one cluster slot).
///
/// The keys of a bucket (`BucketLayout`) — its queues, in-flight lists, workers, retry and dead
/// sets, fulfilment stream, tickets, and everything about the purchases in it — start with
/// `bucketPrefix`: the prefix itself with one bucket (the names of a deployment without buckets),
/// else the prefix and the bucket's hash tag (`iap:{b3.41}`). `inBucket(_:)` gives the keys of one
/// bucket; the others (a user's, the fleet's) start with the prefix alone.
///
/// A key about one thing finds its bucket itself, whatever bucket these keys are of: a ticket's
/// from the ticket id, a resubmission key's from the digest, a purchase's (claim, grant record,
/// hold, refund marker, owner, subscription, notifications) from its original transaction id. The
/// keys of a bucket's machinery (queues, in-flight lists, workers, retry and dead sets, fulfilment
/// stream, results channel, re-checks, reaper lock, notification UUIDs) are those of `bucket`.
package struct RedisKeys: Sendable, Equatable {
    package let prefix: String
    package let layout: BucketLayout
    /// The bucket these keys are of (always 0 with one bucket).
    package let bucket: Int

    package init(prefix: String = Settings.prefix.defaultValue!, layout: BucketLayout = BucketLayout(count: 1)) {
        self.init(prefix: prefix, layout: layout, bucket: 0)
    }

    private init(prefix: String, layout: BucketLayout, bucket: Int) {
        self.prefix = prefix
        self.layout = layout
        self.bucket = bucket
    }

    /// `a:b` or `a:b:c`, written in one go into a string of the right size. An interpolated
    /// key appended each part and each colon on its own, growing the string as it went (about
    /// 300 instructions an append): 27 thousand instructions of every grant went to naming keys.
    static func join(_ a: String, _ b: String, _ c: String? = nil) -> String {
        let count = a.utf8.count + 1 + b.utf8.count + (c.map { $0.utf8.count + 1 } ?? 0)
        return String(unsafeUninitializedCapacity: count) { buffer in
            var at = 0
            func put(_ part: String) {
                at = UnsafeMutableBufferPointer(rebasing: buffer[at...]).initialize(from: part.utf8).1 + at
            }
            put(a)
            buffer[at] = UInt8(ascii: ":")
            at += 1
            put(b)
            if let c {
                buffer[at] = UInt8(ascii: ":")
                at += 1
                put(c)
            }
            return at
        }
    }

    /// The keys of one bucket.
    package func inBucket(_ bucket: Int) -> RedisKeys {
        precondition((0..<layout.count).contains(bucket), "bucket \(bucket) of \(layout.count)")
        return RedisKeys(prefix: prefix, layout: layout, bucket: bucket)
    }

    /// The keys of the bucket a purchase lives in, by its grant unit's original transaction id.
    package func ofPurchase(originalTransactionID: String) -> RedisKeys {
        layout.count == 1 ? self : inBucket(layout.bucket(ofOriginalTransactionID: originalTransactionID))
    }

    /// The keys of the bucket a ticket lives in (the one its id names).
    package func ofTicket(_ id: String) -> RedisKeys { layout.count == 1 ? self : inBucket(layout.bucket(ofTicket: id)) }

    /// The keys of every bucket, in order.
    package var everyBucket: [RedisKeys] { (0..<layout.count).map(inBucket) }

    /// What this bucket's keys start with.
    package var bucketPrefix: String { Self.bucketPrefix(prefix, layout, bucket) }

    private static func bucketPrefix(_ prefix: String, _ layout: BucketLayout, _ bucket: Int) -> String {
        layout.count == 1 ? prefix : "\(prefix):{\(layout.tags[bucket])}"
    }

    private func purchasePrefix(_ originalTransactionID: String) -> String {
        layout.count == 1 ? prefix : Self.bucketPrefix(prefix, layout, layout.bucket(ofOriginalTransactionID: originalTransactionID))
    }

    /// What one user's keys start with: the prefix with one bucket (today's names), else the
    /// prefix and the user's own hash tag (`iap:{u:alice}`), so that one step may change all of a
    /// user's keys together.
    package func userPrefix(_ user: String) -> String { layout.count == 1 ? prefix : "\(prefix):{u:\(user)}" }

    /// string, never written: the key of `key`'s cluster slot that never exists,
    /// `<prefix>:{<tag>}:migration-guard` with a short tag of that slot (`RedisClusterSlot.tag`;
    /// with a tagged prefix, the prefix's own slot). Every script call declares it last
    /// (`PipelineStore.run`), so Redis Cluster runs no step on a slot being migrated: the slot's
    /// source runs a script only while every key it declares is there, and the importing node only
    /// when they all are there too (else `ASK`, `TRYAGAIN`: the client waits and tries again). A
    /// script that did run there would be refused, half-way through, at its first command on a key
    /// it had emptied itself, with the commands before it done: a step cut in two. Outside a
    /// cluster it is one more name in the call.
    package func migrationGuard(forKey key: String) -> String {
        Self.join(prefix, "{" + RedisClusterSlot.tag(ofSlot: RedisClusterSlot.of(key)) + "}", KeyFamily.migrationGuard.rawValue)
    }

    /// list: a stage's queue; producers LPUSH, workers BLMOVE from the right (FIFO).
    package func queue(_ stage: Stage) -> String { Self.join(bucketPrefix, KeyFamily.queue.description, stage.rawValue) }
    /// list: the jobs one worker holds. `member` is the worker's entry in `workers`.
    package func inflight(member: String) -> String { Self.join(bucketPrefix, KeyFamily.inflight.description, member) }
    /// zset: `<stage>:<worker-id>` → last heartbeat (ms).
    package var workers: String { Self.join(bucketPrefix, KeyFamily.workers.description) }
    /// zset: jobs waiting for their next attempt, score = due time (ms).
    package var retry: String { Self.join(bucketPrefix, KeyFamily.retry.description) }
    /// list: dead letters (JSON: the job plus reason, attempts, last error, time).
    package var dead: String { Self.join(bucketPrefix, KeyFamily.dead.description) }
    /// string: the dedupe claim on a grant unit; value = the ticket that claimed it. Never expires.
    package func claim(unit: String, originalTransactionID: String) -> String { Self.join(purchasePrefix(originalTransactionID), KeyFamily.claim.description, unit) }
    /// hash: the grant record of a grant unit. Never expires.
    package func grant(unit: String, originalTransactionID: String) -> String { Self.join(purchasePrefix(originalTransactionID), KeyFamily.grant.description, unit) }
    /// The grant record of a unit known to live in this bucket (one an index of this bucket names).
    package func grant(unitInThisBucket unit: String) -> String { Self.join(bucketPrefix, KeyFamily.grant.description, unit) }
    /// The hold of a unit known to live in this bucket.
    package func hold(unitInThisBucket unit: String) -> String { Self.join(bucketPrefix, KeyFamily.hold.description, unit) }
    /// stream: one entry per new grant, for the app backend (XREADGROUP/XACK).
    package var fulfilment: String { Self.join(bucketPrefix, KeyFamily.fulfilment.description) }
    /// zset (score 0, read by lex range): each user's newest fulfilment events in this bucket,
    /// written in the same step as the entry (`includes/append_event.lua`); a member is
    /// `<user's length, 3 digits><user>NUL<entry id, padded>NUL<event>NUL<original>NUL<unit>NUL<product>`.
    /// At most `userEventsCap` members per user; erasure removes a user's. What the console's user
    /// page reads instead of the stream.
    package var userEvents: String { Self.join(bucketPrefix, KeyFamily.userEvents.description) }
    /// How many of a user's events `userEvents` keeps in each bucket (`append_event.lua`'s cap).
    package static let userEventsCap = 100
    /// hash: the business's figures of one UTC day (`YYYY-MM-DD`) in this bucket, counted in the
    /// step that writes each fulfilment entry (`includes/count_figures.lua`); a field is
    /// `<figure>|<environment>|<storefront>|<currency>|<product>`, its value an integer. Kept for
    /// ever; a report sums the day's hash of every bucket.
    package func figures(day: FigureDay) -> String { Self.join(bucketPrefix, KeyFamily.figures.description, day.description) }
    /// hash: a month's figures summed once it is over (`YYYY-MM`, bucket 0's: `FigureRollup`),
    /// made by the first report that reads the month whole.
    package func figures(month: String) -> String { Self.join(bucketPrefix, KeyFamily.figures.description, month) }
    /// hash: the live count of subscribers in this bucket (`includes/count_subscriber.lua`, in the
    /// step that changes a subscription's record): `active`, `trials` and `mrr` (milliunits a month,
    /// estimated) by `<figure>|<environment>|<storefront>|<currency>|<product>`; a report sums
    /// every bucket's.
    package var subscribers: String { Self.join(bucketPrefix, KeyFamily.subscribers.description) }
    /// hash: a ticket's status and result; expires after `IAP_TICKET_TTL_S`.
    package func ticket(_ id: String) -> String { Self.join(ofTicket(id).bucketPrefix, KeyFamily.ticket.description, id) }
    /// string: sha256(user, receipt) → the ticket it produced, so resubmissions are idempotent.
    package func receipt(digest: String) -> String {
        Self.join(layout.count == 1 ? prefix : inBucket(layout.bucket(ofDigest: digest)).bucketPrefix, KeyFamily.receipt.description, digest)
    }
    /// A ticket's hash when the ticket lies in this bucket (always with one bucket), else `nil`: a
    /// job in this bucket's lists whose ticket lies elsewhere is none of ours (a poison job, a
    /// hand-made one), and a step of this bucket must not reach for its hash in another slot.
    package func ticketInThisBucket(_ id: String) -> String? {
        layout.count == 1 || layout.bucket(ofTicket: id) == bucket ? ticket(id) : nil
    }
    /// sharded pub/sub channel (`SPUBLISH`/`SSUBSCRIBE`): a ticket id of this bucket whenever its status changes.
    package var results: String { Self.join(bucketPrefix, KeyFamily.results.description) }
    /// The results channel a ticket's changes are published on: its own bucket's.
    package func results(ofTicket id: String) -> String { ofTicket(id).results }
    /// string: a Server Notification's `notificationUUID` → the ticket that applies it; kept
    /// `notificationRetention` (Apple retries a delivery for days), so a redelivery is answered 200 and applied once.
    package func notification(uuid: String) -> String { Self.join(bucketPrefix, KeyFamily.notification.description, uuid) }
    /// string: a grant unit Apple refunded or revoked before it was granted (value: when, ms); the
    /// grant stage grants nothing for it; `REFUND_REVERSED` removes it. Never expires.
    package func refunded(unit: String, originalTransactionID: String) -> String {
        Self.join(purchasePrefix(originalTransactionID), KeyFamily.refunded.description, unit)
    }
    /// string: the `revision` Get Refund History last answered for the customer of this transaction
    /// id in one environment (`iapctl apple refunds`), where the next read may start. Never expires.
    package func refundRevision(transactionID: String, environment: String) -> String {
        "\(purchasePrefix(transactionID)):\(KeyFamily.refundRevision):\(environment):\(transactionID)"
    }
    /// string: one of Apple's real-time retention requests answered (value: when, ms), by its
    /// subscription and `requestIdentifier`: the same request again is a replay, refused. Kept
    /// `retentionRequestKept`, past the time a request is taken at all (`signedDate`).
    package func retentionRequest(originalTransactionID: String, requestID: String) -> String {
        "\(purchasePrefix(originalTransactionID)):\(KeyFamily.retentionRequest):\(originalTransactionID):\(requestID)"
    }
    /// The keys of the bucket that holds a user's grants for a time (the bucket of
    /// `timed-grant:<user>`, as if that were an original transaction id): their record, their ends'
    /// schedule and their events in one step.
    package func ofTimedGrants(user: String) -> RedisKeys { ofPurchase(originalTransactionID: "timed-grant:" + user) }
    /// hash: a user's grants for a time (`grant_for_a_time`), grant id → JSON `{grant_id,
    /// entitlement, until (ms), reason, source, by, granted_at, status: active | ended, ended_at?,
    /// ended_by?: expired | revoked}`, on `ofTimedGrants(user:)`'s bucket. Ended ones stay (the id
    /// is never granted again). Never expires; erasure takes it.
    package func timedGrants(user: String) -> String { Self.join(bucketPrefix, KeyFamily.timedGrants.description, user) }
    /// zset: the ends of this bucket's active grants for a time, `<user> NUL <grant id>` → until
    /// (ms): the grant stage's housekeeping ends those due (`end_timed_grant`).
    package var timedGrantEnds: String { Self.join(bucketPrefix, KeyFamily.timedGrantEnds.description) }
    /// string: `original_transaction_id` → the user first granted it (its owner). Never expires.
    package func owner(originalTransactionID: String) -> String { Self.join(purchasePrefix(originalTransactionID), KeyFamily.owner.description, originalTransactionID) }
    /// hash: the users who bought on one Apple Account (Apple's `appTransactionId`), each with their
    /// place in the order they first did (`u:<user>` → 1, 2, …; `joined` → how many), for
    /// `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT`. Its own hash tag with buckets. Never expires.
    package func appleAccount(_ appTransactionID: String) -> String {
        layout.count == 1 ? Self.join(prefix, KeyFamily.appleAccount.description, appTransactionID) : "\(prefix):{a:\(appTransactionID)}:\(KeyFamily.appleAccount)"
    }
    /// string: an `appAccountToken` (lowercase UUID) → its user. Never expires.
    package func accountToken(_ token: String) -> String { Self.join(prefix, KeyFamily.accountToken.description, token) }
    /// string: the random salt of erasure's pseudonyms (`erased:<hex>` = SHA-256 of salt and user
    /// id), made by the first erasure. Never expires; deleting it unlinks every pseudonym for good.
    package var erasureSalt: String { Self.join(prefix, KeyFamily.erasureSalt.description) }
    /// string: an erased user's tombstone, under their pseudonym (never their id): when erased (ms).
    /// Never expires; one per erased user.
    package func erased(pseudonym: String) -> String { "\(prefix):\(pseudonym)" }
    /// string: a user → the first `appAccountToken` bound to them (the reverse of `account-token`),
    /// which the pipeline sets at Apple on their purchases that carry none. Never expires.
    package func userAccountToken(user: String) -> String { Self.join(prefix, KeyFamily.userToken.description, user) }
    /// set: the Apple Accounts (`appTransactionId`) a user was seated on (`seat_apple_account`),
    /// written just before the seat: what offer eligibility reads for the user. Never expires;
    /// as many members as Apple Accounts the user bought or signed in with (a handful).
    package func userAppleAccounts(user: String) -> String { Self.join(prefix, KeyFamily.userAppleAccounts.description, user) }
    /// stream: the offer signatures issued for a user (`kind`, `product_id`, `offer_id`, `nonce`,
    /// `key_id`), the newest 1,000 kept (`MAXLEN ~`); XINFO's `entries-added` counts them all.
    package func offerSignatures(user: String) -> String { Self.join(prefix, KeyFamily.offerSignatures.description, user) }
    /// hash: `transaction_id` → a purchase Apple notified us of whose account is unknown (JSON:
    /// the verified transaction); removed when any user is granted it. One per bucket, of the
    /// purchases in it (`ofPurchase(originalTransactionID:).unclaimed`).
    package var unclaimed: String { Self.join(bucketPrefix, KeyFamily.unclaimed.description) }
    /// A grant record and a hold of this bucket, for a purchase known by its unit alone (an
    /// operator's command): `PipelineStore.originalTransactionID(ofUnit:)` looks in every bucket.
    package func grantInThisBucket(unit: String) -> String { Self.join(bucketPrefix, KeyFamily.grant.description, unit) }
    package func holdInThisBucket(unit: String) -> String { Self.join(bucketPrefix, KeyFamily.hold.description, unit) }
    /// list: the newest notifications about one original transaction (JSON, newest first, at most
    /// 100), for the subscription logic.
    package func notifications(originalTransactionID: String) -> String {
        Self.join(purchasePrefix(originalTransactionID), KeyFamily.notifications.description, originalTransactionID)
    }
    /// zset: the App Store Server API calls of the last window, fleet-wide, per environment and
    /// endpoint (`production`/`sandbox`, `transaction_info`…); member = a call id, score = when (ms).
    /// With buckets, the permits and the hold of one endpoint share a hash tag (one step reads both).
    package func apiPermits(environment: String, endpoint: String) -> String {
        layout.count == 1 ? "\(prefix):\(KeyFamily.apple):permits:\(environment):\(endpoint)" : "\(prefix):{\(KeyFamily.apple):\(environment):\(endpoint)}:permits"
    }
    /// string: set after Apple's 429: no process calls that endpoint before this UNIX time (ms); expires then.
    package func apiHold(environment: String, endpoint: String) -> String {
        layout.count == 1 ? "\(prefix):\(KeyFamily.apple):hold:\(environment):\(endpoint)" : "\(prefix):{\(KeyFamily.apple):\(environment):\(endpoint)}:hold"
    }
    /// string: a signature a game backend's request carried (`IAP_CLIENT_KEYS_FILE`), kept for
    /// twice the allowed clock skew so a replay within it is refused.
    package func clientSignature(_ hex: String) -> String { Self.join(prefix, KeyFamily.signature.description, hex) }
    /// A console sign-in (`iap-console`): the user and role, expiring after `IAP_CONSOLE_SESSION_S`.
    package func consoleSession(_ id: String) -> String { "\(prefix):\(KeyFamily.console):session:\(id)" }
    /// string: failed console sign-ins of one name (by the SHA-256 of the name) in a window of
    /// `SignInThrottle.window`; expires with the window.
    package func consoleSignInFailures(_ nameHash: String) -> String { "\(prefix):\(KeyFamily.console):signin:\(nameHash)" }
    /// stream: every console action (who, what, on what, how it ended), capped near 10,000 entries.
    package var consoleAudit: String { "\(prefix):\(KeyFamily.console):audit" }
    /// string: the new submissions of one client key in one Unix second (`IAP_RATE_PER_KEY`); expires after 10 s.
    package func rateWindow(clientKey: String, second: Int64) -> String { "\(prefix):\(KeyFamily.rate):key:\(clientKey):\(second)" }
    /// string: the new submissions for one user in one Unix second (`IAP_RATE_PER_USER`); expires after 10 s.
    package func rateWindow(user: String, second: Int64) -> String { "\(userPrefix(user)):\(KeyFamily.rate):user:\(user):\(second)" }
    /// hash: a purchase the purchase policy holds from its grant (its grant fields, `status`
    /// `held`/`released`/`rejected`, `reason`, `held_at`, and the operator's `decided_at`,
    /// `decided_by`, `note`). Never expires: it is the audit of the decision.
    package func hold(unit: String, originalTransactionID: String) -> String { Self.join(purchasePrefix(originalTransactionID), KeyFamily.hold.description, unit) }
    /// zset: the units held now, score = when held (ms); `iapctl held list` reads it. One per
    /// bucket, of the purchases in it (`ofPurchase(originalTransactionID:).holds`).
    package var holds: String { Self.join(bucketPrefix, KeyFamily.holds.description) }
    /// string: how many of a user's grants in this bucket Apple refunded or revoked (less those it
    /// reversed); `IAP_MAX_REFUNDS_PER_USER` holds the user's new purchases from that many on, every
    /// bucket's added up. Never expires.
    ///
    /// A user's indexes of their purchases (`refunds:`, `lifetime:`, `user-subscriptions:`) are
    /// kept per bucket, beside the purchases they index, so that a grant, a refund or a transfer
    /// changes purchase and index in one atomic step on any topology; a reader adds up every
    /// bucket's (one round trip).
    package func refunds(user: String) -> String { Self.join(bucketPrefix, KeyFamily.refunds.description, user) }
    /// string: the prorated refunds (`REFUND_PRORATED` of a consumable, taking back part of it) of
    /// a user's grants in this bucket, in Apple's milliunits (100000 is one refund), less those
    /// reversed and those a later refund in whole made one of `refunds:`. Added to `refunds:` for
    /// `IAP_MAX_REFUNDS_PER_USER`. Never expires.
    package func refundsProrated(user: String) -> String { Self.join(bucketPrefix, KeyFamily.refundsProrated.description, user) }
    /// zset: the units granted to a user in this bucket (by a grant, a release, an operator, a
    /// transfer), unit → when it was bought (ms; Apple's purchase date, else when granted): the
    /// index `GET /v1/users/{id}` and `/spend` read (with the grant records it names). The
    /// ledger's: never expires, erasure takes it.
    package func purchases(user: String) -> String { Self.join(bucketPrefix, KeyFamily.purchases.description, user) }
    /// zset: the units of one product granted to one user in the last 24 hours (score: ms), for
    /// the catalog's `daily_limit_per_user`; expires 24 hours after the last grant.
    package func dailyWindow(user: String, product: String) -> String { "\(userPrefix(user)):\(KeyFamily.daily):\(user):\(product)" }
    /// string: whether a user consented to our telling Apple about their purchases when they ask
    /// for a refund (`1`/`0`), set by the game backend (`PUT /v1/users/{id}/consent`). Never expires.
    package func consent(user: String) -> String { Self.join(userPrefix(user), KeyFamily.consent.description, user) }
    /// hash: what the game says of a user's purchases when Apple asks before a refund, by
    /// transaction id: `{"delivery_status", "consumption_percentage"?, "recorded_at"}` (JSON), set by
    /// the game backend (`PUT /v1/users/{id}/purchases/{transaction_id}/consumption`). Never expires.
    package func consumption(user: String) -> String { Self.join(userPrefix(user), KeyFamily.consumption.description, user) }
    /// set: the grant units of the non-consumables in this bucket granted to a user (their
    /// entitlements last until revoked). Never expires.
    package func lifetime(user: String) -> String { Self.join(bucketPrefix, KeyFamily.lifetime.description, user) }
    /// hash: one auto-renewable subscription, by its `original_transaction_id`: `user_id` (its
    /// owner), `product_id`, `status` (`active`, `grace_period`, `billing_retry`, `expired`,
    /// `revoked`), `expires_at`, `auto_renew`, `latest_transaction_id`, `event_at` (when Apple said
    /// what made this state: older news is ignored), `cause`, `entitlements`, `updated_at`,
    /// `grace_expires_at`, `environment`, `recheck_tries` (re-checks of this period so far),
    /// `rechecked_at`. Never expires.
    package func subscription(originalTransactionID: String) -> String {
        Self.join(purchasePrefix(originalTransactionID), KeyFamily.subscription.description, originalTransactionID)
    }
    /// set: the original transaction ids of a user's subscriptions in this bucket. Never expires.
    package func subscriptions(user: String) -> String { Self.join(bucketPrefix, KeyFamily.userSubscriptions.description, user) }
    /// zset: the subscriptions to re-check with Apple, member = `original_transaction_id`, score =
    /// when (ms): before and after each period's end (`IAP_RECHECK_*`); removed when it expires or is
    /// revoked. Due ones become re-check jobs on the verify queue (`promote_due_rechecks`).
    package var rechecks: String { Self.join(bucketPrefix, KeyFamily.rechecks.description) }
    /// The consumer group of `iap-webhook` on the fulfilment stream (created at the stream's start
    /// unless it exists: create it at `$` first to deliver only new events).
    package static let webhookGroup = "webhook"
    /// list: one user's fulfilment events waiting for delivery to the webhook, oldest first (JSON:
    /// the entry's `id` and `fields`), filled from the stream by `route_fulfilment_events`.
    /// One per bucket, of the events of its stream: a user's events keep their order per bucket,
    /// so per purchase (docs/webhooks.md).
    package func webhookEvents(user: String) -> String { "\(bucketPrefix):\(KeyFamily.webhook):events:\(user)" }
    /// set: the users whose events of this bucket a webhook job is delivering (at most one job per
    /// user and bucket, so a user's events of one bucket arrive in order).
    package var webhookBusy: String { "\(bucketPrefix):\(KeyFamily.webhook):busy" }
    /// The ticket of the job delivering one user's events of this bucket (`iapctl ticket
    /// webhook:<user>` shows its retries): `webhook:<user>`, `<bucket>.webhook:<user>` with several buckets.
    package func webhookTicket(user: String) -> String { layout.ticketID("webhook:\(user)", inBucket: bucket) }
    /// A replayed dead event's ticket: `webhook-event:<event id>` (its bucket's number first with several).
    package func webhookEventTicket(eventID: String) -> String { layout.ticketID("webhook-event:\(eventID)", inBucket: bucket) }

    // Several destinations (`IAP_WEBHOOKS_FILE`): the destination `default` (`IAP_WEBHOOK_URL`)
    // keeps the keys above; each other one has its own consumer group, lists, busy set and
    // tickets, so one slow destination never holds another. A destination's name is
    // `[a-z0-9_-]{1,32}` (no `:` or `@`), so none of its keys or tickets can be another's.

    /// The name of the destination `IAP_WEBHOOK_URL` names, which keeps the keys of one webhook.
    package static let defaultWebhookDestination = "default"
    /// The consumer group of a destination: `webhook` for the default, `webhook:<name>`.
    package static func webhookGroup(to destination: String) -> String {
        destination == defaultWebhookDestination ? webhookGroup : "\(webhookGroup):\(destination)"
    }
    /// The destination a consumer group delivers to: `default` for `webhook`, `<name>` for
    /// `webhook:<name>`; `nil` for a group of your own.
    package static func webhookDestination(ofGroup group: String) -> String? {
        if group == webhookGroup { return defaultWebhookDestination }
        guard group.hasPrefix(webhookGroup + ":") else { return nil }
        let name = group.dropFirst(webhookGroup.count + 1)
        return name.isEmpty || name.contains(":") || name.contains("@") ? nil : String(name)
    }
    /// A user's events waiting for `destination`: `webhook:events:<user>` for the default, else
    /// `webhook:to:<name>:events:<user>`.
    package func webhookEvents(user: String, to destination: String) -> String {
        destination == Self.defaultWebhookDestination
            ? webhookEvents(user: user) : "\(bucketPrefix):\(KeyFamily.webhook):to:\(destination):events:\(user)"
    }
    /// The users a delivery job to `destination` is delivering: `webhook:busy`, `webhook:to:<name>:busy`.
    package func webhookBusy(to destination: String) -> String {
        destination == Self.defaultWebhookDestination ? webhookBusy : "\(bucketPrefix):\(KeyFamily.webhook):to:\(destination):busy"
    }
    /// A user's delivery ticket for `destination`: `webhook:<user>`, `webhook@<name>:<user>`.
    package func webhookTicket(user: String, to destination: String) -> String {
        destination == Self.defaultWebhookDestination
            ? webhookTicket(user: user) : layout.ticketID("webhook@\(destination):\(user)", inBucket: bucket)
    }
    /// A replayed dead event's ticket for `destination`: `webhook-event:<id>`, `webhook-event@<name>:<id>`.
    package func webhookEventTicket(eventID: String, to destination: String) -> String {
        destination == Self.defaultWebhookDestination
            ? webhookEventTicket(eventID: eventID) : layout.ticketID("webhook-event@\(destination):\(eventID)", inBucket: bucket)
    }
    /// set: the destinations `route_fulfilment_events` has routed this bucket's events to (their
    /// names), so that erasure and `iapctl` find every destination's lists without the file.
    package var webhookDestinations: String { "\(bucketPrefix):\(KeyFamily.webhook):destinations" }
    /// How long a delivery ticket lives unless its job ends first (then it is deleted): past the
    /// longest `IAP_WEBHOOK_MAX_AGE_S`, so a user's retrying job always has its ticket.
    package static let webhookTicketTTL: Duration = .seconds(31 * 86400)
    /// zset: the intakes running, `<host>:<pid>` → when each last said so (ms, every
    /// `QueueSampler` round); an intake removes itself when it stops. `iapctl migrate` refuses
    /// while one is live (seen within `intakeLiveness`). No bucket: the prefix alone.
    package var intakes: String { Self.join(prefix, KeyFamily.intakes.description) }
    /// hash: the queues' last hour for the console, a sample a minute (minute in ms → JSON:
    /// `QueueHistory.Sample`), written by the intakes' sampler (`record_queue_sample.lua`: the
    /// first of each minute, at most 61 minutes).
    package var queueHistory: String { Self.join(prefix, KeyFamily.queueHistory.description) }
    /// hash: the fleet's one notification sweep (`IAP_NOTIFICATION_SWEEP_S`): `owner` and
    /// `lease_until` (ms) while a process sweeps, `next_at` (ms), `cursor:Production` and
    /// `cursor:Sandbox` (the end, ms, of the last window read to its end), and the last sweep's
    /// `last_started_at`, `last_finished_at`, `last_seen`, `last_new`, `last_invalid`, `last_error`.
    /// No bucket: the prefix alone; one slot of its own on a cluster.
    package var notificationSweep: String { Self.join(prefix, KeyFamily.notificationSweep.description) }
    /// hash: the fleet's Apple breaker of one of Apple's services (`verify-receipt`, `server-api`;
    /// `record_apple_failure`, `record_apple_answers`, `take_apple_probe`): `last_answer` (ms
    /// Apple last answered a verify job), `failures` since, `last_failure`, `last_reason`, while
    /// open `opened_at` and `probe_at` (ms), `closed_at`, `openings`. Eight fields for ever. No
    /// bucket: the prefix alone.
    package func appleBreaker(_ service: AppleService) -> String { Self.join(prefix, KeyFamily.appleBreaker.description, service.rawValue) }
    /// hash: the fleet's one refund sweep (`IAP_REFUND_SWEEP_S`), as `notification-sweep` (lease,
    /// `next_at`, `last_*` figures: `last_seen` customers asked, `last_new` refunds taken back),
    /// with a cursor per bucket's fulfilment stream (`cursor:b<bucket>`, ms read up to).
    package var refundSweep: String { Self.join(prefix, KeyFamily.refundSweep.description) }
    /// hash: the customers the refund sweep asks Apple about: user → `<ms>:<original transaction
    /// id>` of their latest grant, renewal or release; dropped 90 days after it.
    package var refundCustomers: String { Self.join(prefix, KeyFamily.refundCustomers.description) }
    /// hash: where a stopped `iapctl adopt import` of one file (by the first 12 bytes of its
    /// SHA-256, hex) got to: `line` and the counts so far; deleted when the import finishes.
    package func adoptionImport(_ digest: String) -> String { Self.join(prefix, KeyFamily.adoptionImport.description, digest) }
    /// How recently an intake must have said it runs to count as running.
    package static let intakeLiveness: Duration = .seconds(15)
    /// The prefix as a `SCAN MATCH` pattern that matches it literally (`*`, `?`, `[`, `]`, `\` escaped).
    package static func globEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "*?[]\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
    /// string: held briefly by the one worker that runs the reaper.
    package var reaperLock: String { "\(bucketPrefix):\(KeyFamily.lock):reaper" }

    /// How long a notification's UUID is remembered: 35 days (Apple retries for up to 3).
    package static let notificationRetention: Duration = .seconds(35 * 86400)
    /// How long an answered retention request is kept (`retention-request:`): an hour, twelve
    /// times the oldest request the intake takes.
    package static let retentionRequestKept: Duration = .seconds(3600)
}
