import AppStoreServerAPI
import AppleReceipt

/// Every `IAP_*` setting, each described once. A default is written here and nowhere else:
/// `PipelineConfiguration` reads it through `SettingSource`, the flags and `--help` show it, and
/// `iapctl settings --markdown` writes it into `docs/configuration.md`.
public enum Settings {
    /// The most buckets a layout may have (`IAP_BUCKETS`; `BucketLayout.maxCount`): each then
    /// still has 16 of the 16,384 cluster slots to find its tag in.
    public static let maxBuckets = 1024

    // MARK: Redis

    public static let redisURL = Setting(
        "IAP_REDIS_URL", .redisURL, default: "redis://127.0.0.1:6379",
        help: "redis://[user:password@]host[:port][/db], unix:///path.sock[?db=N], or "
            + "redis-sentinel://[user:password@]host[:port][,host[:port]…]/<master-name>[/db] "
            + "(sentinels on port 26379 unless given; the credentials and db are the primary's), or "
            + "redis-cluster://[user:password@]host[:port][,host[:port]…] (seed nodes; IAP_PREFIX must then be a hash tag like {iap})",
        readBy: PipelineCommand.all)
    public static let redisTLSCAFile = Setting(
        "IAP_REDIS_TLS_CA_FILE", .file, unset: "the system's roots",
        help: "with rediss://, rediss-sentinel:// or rediss-cluster://: PEM file of the roots that sign the Redis servers' (and "
            + "sentinels') certificates; verification is never off: a server it did not sign, or named otherwise, is never talked to",
        readBy: PipelineCommand.all)
    public static let redisTLSCertFile = Setting(
        "IAP_REDIS_TLS_CERT_FILE", .file, unset: "no client certificate",
        help: "with rediss…: PEM certificate chain presented to servers that ask for one (tls-auth-clients); with IAP_REDIS_TLS_KEY_FILE",
        readBy: PipelineCommand.all)
    public static let redisTLSKeyFile = Setting(
        "IAP_REDIS_TLS_KEY_FILE", .file, unset: "no client certificate", help: "PEM private key of IAP_REDIS_TLS_CERT_FILE",
        readBy: PipelineCommand.all)
    public static let redisSentinelPassword = Setting(
        "IAP_REDIS_SENTINEL_PASSWORD", .secret, unset: "sentinels asked without AUTH",
        help: "the sentinels' own password (requirepass in a sentinel's configuration; the URL's credentials are the primary's); "
            + "never logged", readBy: PipelineCommand.all)
    public static let prefix = Setting(
        "IAP_PREFIX", .text, default: "iap",
        help: "the prefix of every key (no spaces); on redis-cluster:// a hash tag such as {iap}, so every key shares one slot",
        readBy: PipelineCommand.all)
    public static let buckets = Setting(
        "IAP_BUCKETS", .count(1...maxBuckets), default: "1",
        help: "how many buckets the keyspace is cut into, each one hash tag (a purchase's by its original transaction id, a ticket's named by its id); every stage process serves every bucket; fixed once data exists. 1: the key names of a deployment without buckets. On redis-cluster:// the default is 1 with a hash-tag prefix ({iap}: one slot) and 64 with a plain one",
        readBy: PipelineCommand.all)
    public static let redisPoolSize = Setting(
        "IAP_REDIS_POOL_SIZE", .count(1...256), default: "2",
        help: "multiplexed connections per process for ordinary commands, taken in turn (each blocking pop has its own)",
        readBy: PipelineCommand.all)
    public static let redisMinReplicas = Setting(
        "IAP_REDIS_MIN_REPLICAS", .count(0...64), default: "0",
        help: "replicas that must confirm (WAIT) a write before it is acknowledged: the intake's 202 and a notification's 200, "
            + "each claim and each grant; too few in time: the intake answers 503 not_replicated and a worker retries the step",
        readBy: [.intake, .deduper, .granter])
    public static let redisReplicaTimeout = Setting(
        "IAP_REDIS_REPLICA_TIMEOUT_MS", .duration(.milliseconds, .milliseconds(1) ... .milliseconds(4000)), default: "1000",
        help: "how long a write waits for those replicas (the connection is held meanwhile; below the client's 5 s command timeout)",
        readBy: [.intake, .deduper, .granter])

    // MARK: The intake

    public static let httpHost = Setting(
        "IAP_HTTP_HOST", .text, default: "127.0.0.1",
        help: "the address the intake listens on (and a stage's /metrics server)", readBy: PipelineCommand.stages.union([.intake]))
    public static let httpPort = Setting(
        "IAP_HTTP_PORT", .count(0...65535), default: "8080", help: "the intake's port (0: any free port)", readBy: [.intake])
    public static let consoleHost = Setting(
        "IAP_CONSOLE_HOST", .text, default: "127.0.0.1",
        help: "the address iap-console listens on; any but loopback needs IAP_CONSOLE_USERS_FILE", readBy: [.console])
    public static let consolePort = Setting(
        "IAP_CONSOLE_PORT", .count(0...65535), default: "8081", help: "iap-console's port (0: any free port)", readBy: [.console, .iapctl])
    public static let consoleUsersFile = Setting(
        "IAP_CONSOLE_USERS_FILE", .file, unset: "only one operator, on loopback, signs in (as admin, with a password printed at start)",
        help: "JSON object of user name → {\"password_hash\": bcrypt, \"role\": viewer, support, operator, admin or finance}: who may sign "
            + "in to iap-console and what each may do; reloaded on SIGHUP",
        readBy: [.console])
    public static let consoleOrigin = Setting(
        "IAP_CONSOLE_ORIGIN", .text, unset: "http://IAP_CONSOLE_HOST:IAP_CONSOLE_PORT (and the localhost spellings on loopback)",
        help: "the console's origin as browsers reach it (https://console.example.com behind a TLS proxy): a request that can "
            + "change something must come from it; https makes the session cookie Secure",
        readBy: [.console])
    public static let consoleSession = Setting(
        "IAP_CONSOLE_SESSION_S", .duration(.seconds, .seconds(60) ... .seconds(86_400)), default: "28800",
        help: "a console sign-in lasts this long (8 hours), kept in Redis", readBy: [.console, .iapctl])
    public static let maxBodyBytes = Setting(
        "IAP_MAX_BODY_BYTES", .bytes(1024...64 << 20), default: "262144", help: "the largest request body the intake reads",
        readBy: [.intake])
    public static let ticketTTL = Setting(
        "IAP_TICKET_TTL_S", .duration(.seconds, .seconds(60) ... .seconds(31_536_000)), default: "604800",
        help: "tickets and resubmission keys expire after this (7 days)", readBy: [.intake, .verifier, .granter, .notifier, .iapctl, .console])
    public static let clientKeysFile = Setting(
        "IAP_CLIENT_KEYS_FILE", .file, unset: "the intake is open (one warning line at start)",
        help: "JSON object of key id → secret (each at least 16 bytes), or → {\"secret\", \"scopes\": [receipts, users, offers, "
            + "support, reports]}, of the callers of /v1/receipts*, /v1/users/*, /v1/offers/*, /v1/support/* and /v1/reports/* (a "
            + "bare secret: receipts, users and offers): set, every "
            + "such request must be signed with a key of the route's scope; unset, /v1/support/* is refused; reloaded on SIGHUP",
        readBy: [.intake])
    public static let allowOpenIntake = Setting(
        "IAP_ALLOW_OPEN_INTAKE", .choice(["on", "off"]), default: "off",
        help: "on: an intake without IAP_CLIENT_KEYS_FILE may listen on an address other than loopback (anyone who reaches it "
            + "may submit, read and write users' facts); off: it refuses to start there, naming IAP_CLIENT_KEYS_FILE",
        readBy: [.intake])
    public static let maxWaitingPerKey = Setting(
        "IAP_MAX_WAITING_PER_KEY", .count(1...1_000_000), default: "1000",
        help: "GET /v1/receipts/{ticket}?wait= requests one client key may have waiting on one intake; over it: 429 too_many_waiting",
        readBy: [.intake])
    public static let ratePerKey = Setting(
        "IAP_RATE_PER_KEY", .count(0...1_000_000), default: "0",
        help: "new submissions a second, fleet-wide, per client key (signed requests only); over it: 429 rate_limited; 0: no limit",
        readBy: [.intake])
    public static let maxQueueDepth = Setting(
        "IAP_MAX_QUEUE_DEPTH", .count(0...100_000_000), default: "100000",
        help: "jobs waiting to be verified (queued or due a retry), every bucket's together, past which a new submission is "
            + "503 queue_full with Retry-After (a resubmission still gets its ticket); 0: no limit. 100,000 receipts of 10 KB "
            + "hold about 1.1 GB: keep it well inside Redis's maxmemory (docs/operations/capacity.md)",
        readBy: [.intake])
    public static let ratePerUser = Setting(
        "IAP_RATE_PER_USER", .count(0...1_000_000), default: "0",
        help: "new submissions a second, fleet-wide, per user_id; over it: 429 rate_limited; 0: no limit", readBy: [.intake])
    public static let tlsCertFile = Setting(
        "IAP_TLS_CERT_FILE", .file, unset: "plain HTTP",
        help: "PEM certificate chain: with IAP_TLS_KEY_FILE the intake speaks HTTPS itself (both or neither)", readBy: [.intake])
    public static let tlsKeyFile = Setting(
        "IAP_TLS_KEY_FILE", .file, unset: "plain HTTP", help: "PEM private key of IAP_TLS_CERT_FILE", readBy: [.intake])
    public static let appleOnlineChecks = Setting(
        "IAP_APPLE_ONLINE_CHECKS", .choice(["on", "off"]), default: "off",
        help: "on: a Server Notification's certificate chain is validated at the current time and each certificate that "
            + "names an OCSP responder is asked about (Apple's enableOnlineChecks); a revoked one is refused 401, a responder "
            + "that does not answer is no refusal; a verified chain is trusted for 15 minutes",
        readBy: [.intake])
    public static let appleAppID = Setting(
        "IAP_APPLE_APP_ID", .count(1...Int.max), unset: "not checked",
        help: "your app's Apple id: production notifications for another appAppleId are refused", readBy: [.intake, .notifier, .iapctl])

    // MARK: Apps and signed data

    public static let bundleIDs = Setting(
        "IAP_BUNDLE_IDS", .list, unset: "required by the verifier; the intake answers notifications 503 without it",
        help: "comma-separated bundle ids of your apps (the first is the App Store Server API token's bid)",
        readBy: [.intake, .verifier, .notifier, .iapctl, .console])
    public static let appsFile = Setting(
        "IAP_APPS_FILE", .file, unset: "one app: IAP_BUNDLE_IDS with the single-app settings",
        help: "several apps (JSON keyed by bundle id): each one's shared_secret, app_apple_id, server_api {key_id, issuer_id, "
            + "private_key_file}, offer_key {key_id, private_key_file} and products_file, each optional (absent: the single-app setting); its bundle ids are the ones "
            + "accepted (IAP_BUNDLE_IDS unset or the same); a request may name its bundle_id, else the apps are tried in turn",
        readBy: [.intake, .verifier, .deduper, .granter, .notifier, .iapctl, .console])
    public static let appleRootCerts = Setting(
        "IAP_APPLE_ROOT_CERTS", .list, unset: "Apple Root CA - G3 (built in)",
        help: "comma-separated PEM or DER files: the roots signed data must chain to (apple-sim's test root in local runs)",
        readBy: [.intake, .verifier, .notifier, .iapctl, .console])

    // MARK: verifyReceipt

    public static let appleProductionURL = Setting(
        "IAP_APPLE_PRODUCTION_URL", .url, default: AppleVerifierConfiguration.productionURL, help: "verifyReceipt in production",
        readBy: [.verifier])
    public static let appleSandboxURL = Setting(
        "IAP_APPLE_SANDBOX_URL", .url, default: AppleVerifierConfiguration.sandboxURL, help: "verifyReceipt in the sandbox",
        readBy: [.verifier])
    public static let appleSharedSecret = Setting(
        "IAP_APPLE_SHARED_SECRET", .secret, unset: "none",
        help: "the app's shared secret, sent to verifyReceipt as password; never logged", readBy: [.verifier])
    public static let appleTimeout = Setting(
        "IAP_APPLE_TIMEOUT_MS", .duration(.milliseconds, .milliseconds(100) ... .seconds(600)), default: "15000",
        help: "each request to Apple (verifyReceipt and the Server API)", readBy: [.verifier, .notifier])

    // MARK: The App Store Server API

    public static let appleAPIKeyID = Setting(
        "IAP_APPLE_API_KEY_ID", .text, unset: "none",
        help: "App Store Server API key id; the key's three settings come all or none. Without them a transaction_id alone "
            + "is refused with server_api_not_configured",
        readBy: [.intake, .verifier, .granter, .notifier, .iapctl, .console])
    public static let appleAPIIssuerID = Setting(
        "IAP_APPLE_API_ISSUER_ID", .text, unset: "none", help: "App Store Server API issuer id",
        readBy: [.intake, .verifier, .granter, .notifier, .iapctl, .console])
    public static let appleAPIPrivateKeyFile = Setting(
        "IAP_APPLE_API_PRIVATE_KEY_FILE", .file, unset: "none", help: "the key's .p8 file (PEM, P-256); never logged",
        readBy: [.intake, .verifier, .granter, .notifier, .iapctl, .console])
    public static let appleAPIProductionURL = Setting(
        "IAP_APPLE_API_PRODUCTION_URL", .url, default: ServerAPIConfiguration.productionURL,
        help: "the Server API's base URL in production (a path prefix is kept: requests go to <base>/inApps/…)",
        readBy: [.verifier, .notifier, .iapctl, .console])
    public static let appleAPISandboxURL = Setting(
        "IAP_APPLE_API_SANDBOX_URL", .url, default: ServerAPIConfiguration.sandboxURL, help: "the Server API's base URL in the sandbox",
        readBy: [.verifier, .notifier, .iapctl, .console])
    public static let appleAPIMaxRPS = Setting(
        "IAP_APPLE_API_MAX_RPS", .count(1...10_000), default: "50",
        help: "Server API calls a second per endpoint, fleet-wide, in production (sandbox: a tenth)", readBy: [.verifier, .notifier, .iapctl, .console])

    // MARK: Offers

    public static let offerKeyID = Setting(
        "IAP_OFFER_KEY_ID", .text, unset: "none: POST /v1/offers/signatures answers 503 offers_not_configured",
        help: "the In-App Purchase key's id that signs offers (POST /v1/offers/signatures: promotional v1 and V2, "
            + "introductory offer eligibility); with IAP_OFFER_PRIVATE_KEY_FILE (both or neither); the JWS kinds' iss is "
            + "IAP_APPLE_API_ISSUER_ID (or an app's issuer_id); an app of IAP_APPS_FILE may have its own offer_key",
        readBy: [.intake])
    public static let offerPrivateKeyFile = Setting(
        "IAP_OFFER_PRIVATE_KEY_FILE", .file, unset: "none", help: "the In-App Purchase key's .p8 file (PEM, P-256); never logged",
        readBy: [.intake])

    // MARK: The catalog and the purchase policy

    public static let productsFile = Setting(
        "IAP_PRODUCTS_FILE", .file, unset: "required by the deduper and the notifier; the intake and iapctl user need it for entitlements",
        help: "the product catalog (JSON): each product's type and optional daily_limit_per_user, entitlements, subscription_group "
            + "and offers (each offer id's eligibility: any, lapsed or new); optional refund_preference rules (docs/security.md, "
            + "refund answers by rule)",
        readBy: [.intake, .deduper, .notifier, .iapctl, .console])
    public static let currencies = Setting(
        "IAP_CURRENCIES", .list, unset: "any",
        help: "ISO 4217 codes a purchase may be paid in, comma-separated; others are held", readBy: [.deduper, .iapctl])
    public static let sandbox = Setting(
        "IAP_SANDBOX", .text, default: "allow",
        help: "allow, deny (sandbox purchases rejected), or the path of a file of user ids allowed to use the sandbox (read at start)",
        readBy: [.deduper, .iapctl])
    public static let maxRefundsPerUser = Setting(
        "IAP_MAX_REFUNDS_PER_USER", .count(0...1_000_000), default: "0",
        help: "from this many refunds and revocations on (a refund in part counting as its share), a user's new purchases are held; 0: never", readBy: [.deduper, .iapctl])
    public static let maxAccountsPerAppleAccount = Setting(
        "IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT", .count(0...1_000_000), default: "0",
        help: "how many of your users may buy on one Apple Account (Apple's appTransactionId): a purchase by one more is "
            + "held, apple_account_shared; 0: no limit. With the Server API key, the verifier asks Apple (Get App Transaction "
            + "Info) for the account of evidence that does not name it (a legacy receipt)",
        readBy: [.verifier, .deduper])
    public static let sharingPolicy = Setting(
        "IAP_SHARING_POLICY", .choice(["bind", "transfer", "share"]), default: "bind",
        help: "another account proving a non-consumable or subscription the owner holds: bind (duplicate, "
            + "owned_by_another_account), transfer (it moves to the newest account) or share (both keep its entitlements)",
        readBy: [.deduper, .iapctl])
    public static let adoptedAt = Setting(
        "IAP_ADOPTED_AT", .text, unset: "none: no cutover, every purchase is granted as new",
        help: "when the app moved onto the pipeline (ISO 8601, like 2026-11-01T00:00:00Z; never in the future): a purchase "
            + "made before it that the books do not know is pre-adoption (IAP_PRE_ADOPTION); an app of IAP_APPS_FILE may have its "
            + "own adopted_at",
        readBy: [.deduper, .iapctl])
    public static let preAdoption = Setting(
        "IAP_PRE_ADOPTION", .choice(["record", "hold", "grant"]), default: "record",
        help: "what a pre-adoption purchase gets: record (claimed and owned, entitlements active, an adopted event instead of "
            + "granted), hold (held, reason pre_adoption, for an operator) or grant (granted as new)",
        readBy: [.deduper, .iapctl])
    public static let refundPreference = Setting(
        "IAP_REFUND_PREFERENCE", .text, default: "none",
        help: "the refund preference the notifier sends when it answers Apple's CONSUMPTION_REQUEST for users who consented: "
            + "none (it does not answer), decline, grant_full or grant_prorated, or a map by Apple's consumptionRequestReason "
            + "(UNINTENDED_PURCHASE=grant_full,FULFILLMENT_ISSUE=grant_full,default=decline; UNSATISFIED_WITH_PURCHASE, LEGAL, "
            + "OTHER; a reason the map does not name takes default; none in a map: the facts without a preference); the catalog's "
            + "refund_preference rules, if any, answer first and this is the rule of last resort; needs the Server API key",
        readBy: [.notifier])

    public static let setAppAccountTokens = Setting(
        "IAP_SET_APP_ACCOUNT_TOKENS", .choice(["on", "off"]), default: "on",
        help: "a purchase granted without an app account token to a user who has one bound (PUT "
            + "/v1/users/{id}/app-account-token, or an earlier purchase): the notifier sets it at Apple (Set App Account "
            + "Token; family-shared purchases skipped), so Apple's later notifications of it name the user; needs the Server "
            + "API key on the granter (it queues) and the notifier (it calls); off: never",
        readBy: [.granter])

    public static let receiptMode = Setting(
        "IAP_RECEIPT_MODE", .choice(["verify_receipt", "server_api", "auto"]), default: "verify_receipt",
        help: "how a legacy receipt (receipt_data) is verified: verify_receipt asks Apple's deprecated verifyReceipt with "
            + "the shared secret; server_api reads the transaction ids out of the receipt itself (no signature checked) and "
            + "verifies what Apple's Server API signs of them (Get Transaction History: prices, offers and the Apple Account "
            + "come with it, no shared secret); auto: server_api when the Server API key is set, verify_receipt otherwise",
        readBy: [.verifier])

    public static let finishTransactions = Setting(
        "IAP_FINISH_TRANSACTIONS", .choice(["on", "off"]), default: "on",
        help: "a consumable granted: the notifier tells Apple it is delivered (Finish Transaction, App Store Server API "
            + "1.20), so a client that crashed before it finished the transaction is not handed it again; an unknown "
            + "transaction ends the errand as an answer; needs the Server API key on the granter (it queues) and the "
            + "notifier (it calls); off: never",
        readBy: [.granter])

    public static let notificationSweep = Setting(
        "IAP_NOTIFICATION_SWEEP_S", .duration(.seconds, .zero ... .seconds(604_800)), default: "3600",
        help: "every this long one notifier (fleet-wide) reads Apple's notification history for what never arrived "
            + "(onlyFailures, since the last sweep with one period of overlap) and stores it as the intake would; 0: off; "
            + "needs the Server API key and IAP_BUNDLE_IDS",
        readBy: [.notifier])

    public static let refundSweep = Setting(
        "IAP_REFUND_SWEEP_S", .duration(.seconds, .zero ... .seconds(2_592_000)), default: "0",
        help: "every this long one notifier (fleet-wide) asks Get Refund History about each customer with a grant in the last "
            + "90 days (only what is new since it last asked) and takes back, once, refunds nobody reported (source "
            + "refund_history), at most a tenth of IAP_APPLE_API_MAX_RPS customers a second; 0: off; needs the Server API key",
        readBy: [.notifier])

    // MARK: Subscriptions

    public static let recheckBefore = Setting(
        "IAP_RECHECK_BEFORE_S", .duration(.seconds, .zero ... .seconds(2_592_000)), default: "3600",
        help: "ask Apple about an active subscription this long before its period ends",
        readBy: [.verifier, .granter, .notifier, .iapctl, .console])
    public static let recheckAfter = Setting(
        "IAP_RECHECK_AFTER_S", .duration(.seconds, .zero ... .seconds(2_592_000)), default: "3600",
        help: "and this long after it ended when no renewal came; then the first wait of the backoff",
        readBy: [.verifier, .granter, .notifier, .iapctl, .console])
    public static let recheckMax = Setting(
        "IAP_RECHECK_MAX", .count(0...100), default: "5",
        help: "re-checks after that, waits doubling (at most a day), while Apple has not settled the subscription",
        readBy: [.verifier, .granter, .notifier, .iapctl, .console])

    // MARK: Stage workers

    public static let concurrency = Setting(
        "IAP_CONCURRENCY", .count(1...10_000), default: "64", help: "jobs in flight per worker process (and connections to Apple)",
        readBy: PipelineCommand.stages)
    public static let lease = Setting(
        "IAP_LEASE_MS", .duration(.milliseconds, .seconds(1) ... .seconds(3600)), default: "30000",
        help: "a worker silent this long loses its jobs to the reaper", readBy: PipelineCommand.stages.union([.iapctl, .console]))
    public static let maxRedeliveries = Setting(
        "IAP_MAX_REDELIVERIES", .count(0...1000), default: "5", help: "redeliveries before a job is dead-lettered as poison",
        readBy: PipelineCommand.stages)
    public static let shutdownGrace = Setting(
        "IAP_SHUTDOWN_GRACE_MS", .duration(.milliseconds, .zero ... .seconds(3600)), default: "25000",
        help: "on SIGTERM, time for jobs in flight to finish before they are handed back", readBy: PipelineCommand.stages)
    public static let metricsPort = Setting(
        "IAP_METRICS_PORT", .count(1...65535), unset: "none",
        help: "a stage worker serves /metrics (Prometheus) on this port, on IAP_HTTP_HOST; so does the intake, which also "
            + "serves it on IAP_HTTP_PORT unless IAP_CLIENT_KEYS_FILE is set (then only here: metrics are not for its callers)",
        readBy: PipelineCommand.stages.union([.intake]))
    public static let maxAttempts = Setting(
        "IAP_MAX_ATTEMPTS", .count(1...1000), default: "12",
        help: "attempts at a call that fails transiently (Apple) before the job is dead (retries_exhausted); iap-webhook: "
            + "only a replayed delivery (a user's deliveries retry until IAP_WEBHOOK_MAX_AGE_S, then webhook_expired)",
        readBy: [.verifier, .notifier, .webhook])
    public static let appleBreakerFailures = Setting(
        "IAP_APPLE_BREAKER_FAILURES", .count(0...1_000_000), default: "5",
        help: "Apple-side failures of verify jobs (5xx, 21005, retryable 211xx, timeouts, refused connections), fleet-wide, "
            + "with no answer from Apple for 2 s, that open the Apple breaker: verify jobs then wait in their queue and one "
            + "probe asks Apple every IAP_APPLE_BREAKER_PROBE_MS until Apple answers. A failure spends a job's attempt only "
            + "if Apple answered someone since the job last failed. 0: no breaker (every failure spends)",
        readBy: [.verifier])
    public static let appleBreakerProbe = Setting(
        "IAP_APPLE_BREAKER_PROBE_MS", .duration(.milliseconds, .milliseconds(50) ... .seconds(600)), default: "5000",
        help: "while the Apple breaker is open: how often one verify job of the fleet asks Apple", readBy: [.verifier])
    public static let fulfilmentRetention = Setting(
        "IAP_FULFILMENT_RETENTION_S", .duration(.seconds, .seconds(60) ... .seconds(3_650 * 86_400)), default: "2592000",
        help: "each bucket's fulfilment stream keeps its entries this long (30 days), and longer those a consumer group "
            + "(the webhook's, your backend's) or the refund sweep has not had yet: an event nobody has had is never trimmed",
        readBy: [.granter])
    public static let deadMax = Setting(
        "IAP_DEAD_MAX", .count(1...100_000_000), default: "10000",
        help: "dead letters kept per bucket, the newest; an older one is dropped, counted (iap_dead_letters_dropped_total) "
            + "and logged with its ticket and reason", readBy: [.granter])
    public static let deadMaxAge = Setting(
        "IAP_DEAD_MAX_AGE_S", .duration(.seconds, .seconds(60) ... .seconds(3_650 * 86_400)), default: "15552000",
        help: "no dead letter is kept longer (180 days): dropped, counted and logged as past IAP_DEAD_MAX", readBy: [.granter])
    public static let retryBase = Setting(
        "IAP_RETRY_BASE_MS", .duration(.milliseconds, .milliseconds(1) ... .seconds(86400)), default: "1000",
        help: "backoff: random in 0…min(max, base·2^(n-1)), at least Apple's Retry-After", readBy: [.verifier, .notifier, .webhook])
    public static let retryMax = Setting(
        "IAP_RETRY_MAX_MS", .duration(.milliseconds, .milliseconds(1) ... .seconds(86400)), default: "600000",
        help: "the longest wait between two attempts (at least IAP_RETRY_BASE_MS)", readBy: [.verifier, .notifier, .webhook])

    // MARK: The webhook

    public static let webhookURL = Setting(
        "IAP_WEBHOOK_URL", .url, unset: "required by iap-webhook unless IAP_WEBHOOKS_FILE",
        help: "where every fulfilment event is POSTed: the destination named default", readBy: [.webhook])
    public static let webhookSecret = Setting(
        "IAP_WEBHOOK_SECRET", .secret, unset: "required by iap-webhook",
        help: "the HMAC-SHA256 key of X-IAP-Signature, at least 16 bytes; never logged", readBy: [.webhook])
    public static let webhookPreviousSecret = Setting(
        "IAP_WEBHOOK_PREVIOUS_SECRET", .secret, unset: "one signature",
        help: "while rotating IAP_WEBHOOK_SECRET: the secret being retired; every delivery then carries a second v1= "
            + "signed with it, so receivers that still know only the old one accept it; never logged",
        readBy: [.webhook])
    public static let webhooksFile = Setting(
        "IAP_WEBHOOKS_FILE", .file, unset: "one destination: IAP_WEBHOOK_URL",
        help: "several webhook destinations (JSON keyed by name, a-z 0-9 _ -): each one's url, secret or secret_file "
            + "(previous_secret[_file] while rotating), and optional filters apps (bundle ids), environments (Production, Sandbox), "
            + "events (types), and max_in_flight; each has its own consumer group, order and retries. With IAP_WEBHOOK_URL too, "
            + "that one is the destination default (docs/webhooks.md)",
        readBy: [.webhook])
    public static let webhookMaxAge = Setting(
        "IAP_WEBHOOK_MAX_AGE_S", .duration(.seconds, .seconds(1) ... .seconds(2_592_000)), default: "259200",
        help: "an event is retried this long after it was added (3 days), then dead-lettered (webhook_expired)", readBy: [.webhook])
    public static let webhookTimeout = Setting(
        "IAP_WEBHOOK_TIMEOUT_MS", .duration(.milliseconds, .milliseconds(100) ... .seconds(120)), default: "10000",
        help: "each POST to the webhook", readBy: [.webhook])

    // MARK: Outbound connections

    public static let plainHTTPHosts = Setting(
        "IAP_PLAIN_HTTP_HOSTS", .list, unset: "https only, but to loopback",
        help: "comma-separated hosts that the Apple and webhook URLs may name with plain http:// (apple-sim on a private "
            + "network, as in docker/compose.yaml); every other URL must be https:// unless it is loopback",
        readBy: PipelineCommand.all, environmentOnly: true)

    // MARK: Logging (read before anything else: environment only)

    public static let logLevel = Setting(
        "IAP_LOG_LEVEL", .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]), default: "info",
        help: "the lowest level logged (LOG_LEVEL is read when it is unset)", readBy: PipelineCommand.all, environmentOnly: true)
    public static let logFormat = Setting(
        "IAP_LOG_FORMAT", .choice(["text", "json"]), default: "text",
        help: "text (swift-log's stream format) or json: one object a line on stderr (time in UTC ms, level, label, message, "
            + "source and the metadata as members)",
        readBy: PipelineCommand.all, environmentOnly: true)

    /// Every setting, in the order `docs/configuration.md` lists them.
    public static let all: [Setting] = [
        redisURL, redisTLSCAFile, redisTLSCertFile, redisTLSKeyFile, redisSentinelPassword, prefix, buckets, redisPoolSize, redisMinReplicas, redisReplicaTimeout,
        httpHost, httpPort, consoleHost, consolePort, consoleUsersFile, consoleOrigin, consoleSession, maxBodyBytes, ticketTTL, clientKeysFile, appleOnlineChecks, allowOpenIntake, maxWaitingPerKey, maxQueueDepth, ratePerKey, ratePerUser, tlsCertFile, tlsKeyFile, appleAppID,
        bundleIDs, appsFile, appleRootCerts,
        appleProductionURL, appleSandboxURL, appleSharedSecret, appleTimeout,
        appleAPIKeyID, appleAPIIssuerID, appleAPIPrivateKeyFile, appleAPIProductionURL, appleAPISandboxURL, appleAPIMaxRPS,
        offerKeyID, offerPrivateKeyFile,
        productsFile, currencies, sandbox, maxRefundsPerUser, maxAccountsPerAppleAccount, sharingPolicy, adoptedAt, preAdoption, refundPreference, setAppAccountTokens, finishTransactions, receiptMode,
        notificationSweep, refundSweep,
        recheckBefore, recheckAfter, recheckMax,
        concurrency, lease, maxRedeliveries, shutdownGrace, metricsPort, maxAttempts, appleBreakerFailures, appleBreakerProbe, retryBase, retryMax, fulfilmentRetention, deadMax, deadMaxAge,
        webhookURL, webhookSecret, webhookPreviousSecret, webhooksFile, webhookMaxAge, webhookTimeout,
        plainHTTPHosts,
        logLevel, logFormat,
    ]

    /// The files that hold secrets: each is warned about at start when group or others may read it.
    public static let secretFiles: [Setting] = [
        clientKeysFile, tlsKeyFile, appsFile, appleAPIPrivateKeyFile, offerPrivateKeyFile, redisTLSKeyFile,
    ]

    /// The setting named `variable`, if there is one.
    public static func named(_ variable: String) -> Setting? { all.first { $0.variable == variable } }
}
