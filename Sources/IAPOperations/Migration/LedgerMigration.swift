import Foundation
import IAPStages
import PipelineCore
import RedisClient

/// `iapctl migrate`: copies a ledger kept with one bucket (a single server or Sentinel, the
/// names of a deployment without buckets) into the bucket layout of `destination` (Redis Cluster
/// over `IAP_BUCKETS` buckets), then verifies the copy. It only reads the source.
///
/// Each key goes where the pipeline on the destination will look for it: a purchase's keys to
/// its original transaction id's bucket (a unit's original transaction id is read from its grant
/// record, its hold or the job that claimed it; a unit known by none is taken for its own
/// original transaction id, which it is for consumables and non-consumables), a ticket to the
/// bucket its id hashes to, a resubmission key to its digest's, a user's keys to the user's slot.
/// A user's indexes (lifetime units, subscriptions, refund count), the holds index, the unclaimed
/// purchases and the re-check schedule are split by the bucket of each purchase they name. Keys
/// keep their remaining time to live. Jobs waiting in queues, in the in-flight lists of stopped
/// workers, in the retry set and among the dead letters move to their ticket's bucket (in-flight
/// ones to the front of their queue, as the reaper would); a grant job whose purchases lie in
/// other buckets goes back to the dedupe stage, which splits it into parts (its claims are its
/// own, so nothing is claimed twice); a notification's job and ticket move to its purchase's
/// bucket, the ticket renamed `<bucket>.<id>`. The fulfilment stream's entries go to their
/// purchase's bucket stream with their ids; each consumer group starts every bucket stream where
/// nothing undelivered is skipped (entries pending in the group, or routed to a user's webhook
/// list and not yet delivered, are delivered again: at least once, as always). Webhook delivery
/// jobs are not copied: the webhook stage routes those entries again.
///
/// Rerunning it rewrites the same keys with the same values (lists and sets are rebuilt, stream
/// entries already there are kept): harmless until the fleet has started on the destination.
public struct LedgerMigration: Sendable {
    public let source: any RedisCommandSending
    /// What the source's keys start with (one bucket: `iap`, or `{iap}`).
    public let sourcePrefix: String
    public let destination: any RedisCommandSending
    public let keys: RedisKeys
    /// A worker whose heartbeat is this recent (or an intake's, `intakeLiveness`) is running.
    public let lease: Duration
    /// Keys read or written per round trip.
    public var batch = 1000

    public init(
        source: any RedisCommandSending, sourcePrefix: String, destination: any RedisCommandSending, keys: RedisKeys, lease: Duration
    ) {
        self.source = source
        self.sourcePrefix = sourcePrefix
        self.destination = destination
        self.keys = keys
        self.lease = lease
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// Pipeline processes are registered (live) on the source or the destination.
        case processesRunning([String])
        /// The source does not hold one bucket's names (its prefix is a bucket layout's).
        case sourceHasBuckets(String)

        public var description: String {
            switch self {
            case .processesRunning(let names):
                "pipeline processes are running (stop them first): \(names.prefix(10).joined(separator: ", "))"
                    + (names.count > 10 ? " and \(names.count - 10) more" : "")
            case .sourceHasBuckets(let key): "the source holds bucket keys (\(key)): it must be a ledger with one bucket"
            }
        }
    }

    /// Copies, then verifies. Throws `Failure.processesRunning` before changing anything when a
    /// process is registered on either side.
    public func run(now: Int64 = currentTimeMs()) async throws -> MigrationReport {
        try await refuseWhileRunning(now: now)
        var plan = try await scan()
        var report = MigrationReport(buckets: keys.layout.count)
        try await readUnits(&plan)
        try await moveJobs(&plan, report: &report)
        try await copyKeys(plan, report: &report)
        try await splitIndexes(plan, report: &report)
        try await recount("refunds", plan.refundedGrants, plan, report: &report) { $0.refunds(user: $1) }
        try await recount("refunds-prorated", plan.proratedGrants, plan, report: &report) { $0.refundsProrated(user: $1) }
        try await copyStream(plan, report: &report)
        try await splitUserEvents(plan, report: &report)
        try await verify(plan, report: &report)
        report.unknownKeys = plan.unknown.count
        report.unknownNames = Array(plan.unknown.prefix(20))
        report.skippedKeys = Self.skipped(plan)
        return report
    }

    // MARK: Refusal

    /// Live workers (a heartbeat within the lease) of the source and of every destination bucket,
    /// and live intakes (`RedisKeys.intakes`) on either side.
    func refuseWhileRunning(now: Int64) async throws {
        let since = String(now - lease.milliseconds)
        let intakeSince = String(now - RedisKeys.intakeLiveness.milliseconds)
        var names: [String] = []
        let sourceKeys = RedisKeys(prefix: sourcePrefix)
        for (side, redis, workers, intakes) in [
            ("source", source, [sourceKeys.workers], sourceKeys.intakes),
            ("destination", destination, keys.everyBucket.map(\.workers), keys.intakes),
        ] {
            let replies = try await redis.pipeline(
                workers.map { RedisCommand("ZRANGEBYSCORE", $0, since, "+inf") } + [RedisCommand("ZRANGEBYSCORE", intakes, intakeSince, "+inf")])
            for (index, reply) in replies.enumerated() {
                if case .error(let message) = reply { throw RedisError.server(message) }
                let kind = index == replies.count - 1 ? "intake" : "worker"
                names += (reply.array ?? []).compactMap(\.string).map { "\(side) \(kind) \($0)" }
            }
        }
        if !names.isEmpty { throw Failure.processesRunning(Array(Set(names)).sorted()) }
    }

    // MARK: Scan

    /// The source's keys by what they are (the name after the prefix).
    struct Plan {
        var byFamily: [String: [String]] = [:]
        var unknown: [String] = []
        /// A unit → its original transaction id, from grant records, holds and jobs.
        var originals: [String: String] = [:]
        /// A notification's UUID → its bucket, and old → new ticket ids, from notification jobs.
        var notificationBuckets: [String: Int] = [:]
        var renamedTickets: [String: String] = [:]
        /// Grant records revoked by Apple in whole (a refund or revocation standing), each once.
        var refundedGrants: [(user: String, original: String, weight: Int)] = []
        /// Grant records refunded in part, each with the percentage it counts (milliunits).
        var proratedGrants: [(user: String, original: String, weight: Int)] = []
        /// Jobs moved, by the destination key they were written to.
        var jobs = 0

        func names(_ family: String) -> [String] { byFamily[family] ?? [] }
    }

    /// The families the migration knows; anything else is reported and left.
    static let families: Set<String> = [
        "queue", "inflight", "workers", "retry", "dead", "txn", "grant", "fulfilment", "ticket", "receipt", "lock", "rate",
        "signature", "notification", "refunded", "owner", "held", "holds", "refunds", "refunds-prorated", "purchases", "lifetime", "subscription",
        "user-subscriptions", "webhook", "rechecks", "consent", "daily", "account-token", "unclaimed", "notifications",
        "apple", "intakes", "notification-sweep", "erased", "erasure-salt", "apple-account", "user-token", "consumption", "refund-revision", "refund-sweep", "refund-customers",
        "user-events",
    ]

    func scan() async throws -> Plan {
        var plan = Plan()
        var cursor = "0"
        let head = sourcePrefix + ":"
        repeat {
            let reply = try await source.send("SCAN", cursor, "MATCH", RedisKeys.globEscaped(sourcePrefix) + ":*", "COUNT", "1000")
            guard let parts = reply.array, parts.count == 2, let next = parts[0].string else { throw RedisError.unexpectedReply("SCAN") }
            cursor = next
            for name in (parts[1].array ?? []).compactMap(\.string) where name.hasPrefix(head) {
                let rest = String(name.dropFirst(head.count))
                if rest.hasPrefix("{") { throw Failure.sourceHasBuckets(name) }
                var family = rest.split(separator: ":", maxSplits: 1).first.map(String.init) ?? rest
                if family == "held", rest == "held" { family = "holds" }
                if Self.families.contains(family) {
                    plan.byFamily[family, default: []].append(rest)
                } else {
                    plan.unknown.append(name)
                }
            }
        } while cursor != "0"
        for family in plan.byFamily.keys { plan.byFamily[family]?.sort() }
        return plan
    }

    /// Every unit's original transaction id the source says: grant records and holds.
    func readUnits(_ plan: inout Plan) async throws {
        for (family, prefix) in [("grant", "grant:"), ("held", "held:")] {
            let names = plan.names(family)
            for chunk in names.chunked(batch) {
                let replies = try await source.pipeline(chunk.map {
                    RedisCommand(
                        "HMGET", "\(sourcePrefix):\($0)", "original_transaction_id", "user_id", "revoked_at", "revoked_by",
                        "revocation_percentage")
                })
                for (name, reply) in zip(chunk, replies) {
                    let values = (reply.array ?? []).map(\.string)
                    let unit = String(name.dropFirst(prefix.count))
                    guard values.count == 5, let original = values[0], !original.isEmpty else { continue }
                    plan.originals[unit] = original
                    guard family == "grant", let user = values[1], values[3] == nil else { continue }
                    if values[2].map({ !$0.isEmpty }) == true {
                        plan.refundedGrants.append((user, original, 1))
                    } else if let share = values[4].flatMap({ Int($0) }), share > 0 {
                        plan.proratedGrants.append((user, original, share))
                    }
                }
            }
        }
    }

    /// The original transaction id a unit's keys are kept under: the source's word for it, else
    /// the unit itself (a consumable's and a non-consumable's unit is its transaction id).
    func original(ofUnit unit: String, _ plan: Plan) -> String {
        if let known = plan.originals[unit] { return known }
        if unit.hasPrefix("operator:") { return String(unit.dropFirst("operator:".count)) }
        return unit
    }

    // MARK: Keys copied as they are

    /// Where a key the migration copies whole goes, `nil` for one it leaves (transient, or rebuilt).
    func destinationKey(of rest: String, family: String, _ plan: Plan) -> String? {
        func after(_ head: String) -> String { String(rest.dropFirst(head.count)) }
        switch family {
        case "txn": let unit = after("txn:"); return keys.claim(unit: unit, originalTransactionID: original(ofUnit: unit, plan))
        case "grant": let unit = after("grant:"); return keys.grant(unit: unit, originalTransactionID: original(ofUnit: unit, plan))
        case "held": let unit = after("held:"); return keys.hold(unit: unit, originalTransactionID: original(ofUnit: unit, plan))
        case "refunded":
            let unit = after("refunded:")
            return keys.refunded(unit: unit, originalTransactionID: original(ofUnit: unit, plan))
        case "owner": return keys.owner(originalTransactionID: after("owner:"))
        case "subscription": return keys.subscription(originalTransactionID: after("subscription:"))
        case "notifications": return keys.notifications(originalTransactionID: after("notifications:"))
        case "ticket":
            let id = after("ticket:")
            if id.hasPrefix("webhook:") { return nil }  // a user's delivery job: routed again
            return keys.ticket(plan.renamedTickets[id] ?? id)
        case "receipt": return keys.receipt(digest: after("receipt:"))
        case "notification":
            let uuid = after("notification:")
            let bucket = plan.notificationBuckets[uuid] ?? keys.layout.bucket(ofNotification: uuid)
            return keys.inBucket(bucket).notification(uuid: uuid)
        case "consent": return keys.consent(user: after("consent:"))
        case "consumption": return keys.consumption(user: after("consumption:"))
        case "refund-revision":
            let rest = after("refund-revision:")
            guard let colon = rest.firstIndex(of: ":") else { return nil }
            return keys.refundRevision(transactionID: String(rest[rest.index(after: colon)...]), environment: String(rest[..<colon]))
        case "daily":
            let rest = after("daily:")
            guard let colon = rest.lastIndex(of: ":") else { return nil }
            return keys.dailyWindow(user: String(rest[..<colon]), product: String(rest[rest.index(after: colon)...]))
        case "account-token": return keys.accountToken(after("account-token:"))
        case "user-token": return keys.userAccountToken(user: after("user-token:"))
        case "apple-account": return keys.appleAccount(after("apple-account:"))
        case "signature": return keys.clientSignature(after("signature:"))
        case "notification-sweep": return keys.notificationSweep
        case "refund-sweep": return keys.refundSweep
        case "refund-customers": return keys.refundCustomers
        case "erasure-salt": return keys.erasureSalt
        case "erased": return keys.erased(pseudonym: rest)
        case "apple":
            let parts = rest.split(separator: ":", maxSplits: 3).map(String.init)
            guard parts.count == 4, parts[1] == "hold" else { return nil }
            return keys.apiHold(environment: parts[2], endpoint: parts[3])
        default: return nil
        }
    }

    /// The families copied key by key (DUMP, then RESTORE … REPLACE with the time left to live).
    static let copied = [
        "txn", "grant", "held", "refunded", "owner", "subscription", "notifications", "ticket", "receipt", "notification",
        "consent", "daily", "account-token", "signature", "apple", "notification-sweep", "apple-account", "user-token",
        "consumption", "refund-revision", "refund-sweep", "refund-customers", "erased", "erasure-salt",
    ]

    func copyKeys(_ plan: Plan, report: inout MigrationReport) async throws {
        for family in Self.copied {
            let pairs = copies(of: family, plan)
            var written = 0
            for chunk in pairs.chunked(batch) {
                let read = try await source.pipeline(chunk.flatMap { [RedisCommand("DUMP", $0.0), RedisCommand("PTTL", $0.0)] })
                var commands: [RedisCommand] = []
                for (index, pair) in chunk.enumerated() {
                    guard let payload = read[2 * index].bytes, let ttl = read[2 * index + 1].int, ttl != -2 else { continue }
                    commands.append(RedisCommand(bytes: [
                        Array("RESTORE".utf8), Array(pair.1.utf8), Array(String(max(ttl, 0)).utf8), payload, Array("REPLACE".utf8),
                    ]))
                }
                try Self.expectOK(try await destination.pipeline(commands))
                written += commands.count
            }
            if family == "notification" {
                // A renamed notification ticket: its UUID names the new id.
                for (uuid, bucket) in plan.notificationBuckets {
                    let key = keys.inBucket(bucket).notification(uuid: uuid)
                    guard let old = try await source.send("GET", "\(sourcePrefix):notification:\(uuid)").string,
                          let new = plan.renamedTickets[old]
                    else { continue }
                    try await destination.send("SET", key, new, "KEEPTTL")
                }
            }
            report.add(family, source: plan.names(family).count, moved: written)
        }
    }

    /// Each key of a copied family: its source name and where it goes (none for a key left).
    func copies(of family: String, _ plan: Plan) -> [(source: String, destination: String)] {
        plan.names(family).compactMap { rest in
            destinationKey(of: rest, family: family, plan).map { ("\(sourcePrefix):\(rest)", $0) }
        }
    }

    static func expectOK(_ replies: [RedisReply]) throws {
        for reply in replies { if case .error(let message) = reply { throw RedisError.server(message) } }
    }
}

extension Array {
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
