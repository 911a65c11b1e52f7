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
package struct LedgerMigration: Sendable {
    package let source: any RedisCommandSending
    /// What the source's keys start with (one bucket: `iap`, or `{iap}`).
    package let sourcePrefix: String
    package let destination: any RedisCommandSending
    package let keys: RedisKeys
    /// A worker whose heartbeat is this recent (or an intake's, `intakeLiveness`) is running.
    package let lease: Duration
    /// Keys read or written per round trip.
    package var batch = 1000

    package init(
        source: any RedisCommandSending, sourcePrefix: String, destination: any RedisCommandSending, keys: RedisKeys, lease: Duration
    ) {
        self.source = source
        self.sourcePrefix = sourcePrefix
        self.destination = destination
        self.keys = keys
        self.lease = lease
    }

    package enum Failure: Error, Equatable, CustomStringConvertible {
        /// Pipeline processes are registered (live) on the source or the destination.
        case processesRunning([String])
        /// The source does not hold one bucket's names (its prefix is a bucket layout's).
        case sourceHasBuckets(String)

        package var description: String {
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
    package func run(now: Int64 = currentTimeMs()) async throws -> MigrationReport {
        try await refuseWhileRunning(now: now)
        var plan = try await scan()
        var report = MigrationReport(buckets: keys.layout.count)
        try await readUnits(&plan)
        try await moveJobs(&plan, report: &report)
        try await copyKeys(plan, report: &report)
        try await splitIndexes(plan, report: &report)
        try await recount(.refunds, plan.refundedGrants, plan, report: &report) { $0.refunds(user: $1) }
        try await recount(.refundsProrated, plan.proratedGrants, plan, report: &report) { $0.refundsProrated(user: $1) }
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

    /// The source's keys by their family (each the name after the prefix).
    struct Plan {
        var byFamily: [KeyFamily: [String]] = [:]
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

        func names(_ family: KeyFamily) -> [String] { byFamily[family] ?? [] }
    }

    /// What the migration does with each family's keys.
    enum Treatment: Equatable {
        /// Each key copied whole to where the pipeline looks for it (`destinationKey`).
        case copied
        /// Jobs: each moved to its ticket's bucket (`moveJobs`).
        case jobs
        /// Each member placed in the same index of its purchase's bucket (`splitIndexes`, `splitUserEvents`).
        case split
        /// A count per bucket from the grant records there (`recount`).
        case recounted
        /// The fulfilment stream's entries, with their ids and groups (`copyStream`).
        case stream
        /// Left: transient (gone in seconds), rebuilt by the fleet, or never written.
        case left
    }

    /// The rule for each family the key map has: a new family does not compile until it says.
    static func treatment(of family: KeyFamily) -> Treatment {
        switch family {
        case .claim, .grant, .hold, .refunded, .owner, .subscription, .notifications, .refundRevision, .retentionRequest, .timedGrants, .ticket, .receipt,
             .notification, .daily, .consent, .consumption, .userToken, .userAppleAccounts, .offerSignatures, .appleAccount,
             .accountToken, .erasureSalt, .erased, .apple, .appleBreaker, .signature, .console, .notificationSweep, .refundSweep,
             .refundCustomers, .adoptionImport, .figures, .subscribers:
            .copied
        case .queue, .inflight, .retry, .dead: .jobs
        case .lifetime, .userSubscriptions, .holds, .unclaimed, .rechecks, .purchases, .userEvents, .timedGrantEnds: .split
        case .refunds, .refundsProrated: .recounted
        case .fulfilment: .stream
        // Heartbeats and announcements (the fleet writes its own), the reaper's lock, rate
        // windows, the webhook stage's user lists (its entries are routed again), a channel, a
        // name never written.
        case .workers, .intakes, .lock, .rate, .webhook, .results, .migrationGuard, .queueHistory: .left
        }
    }

    func scan() async throws -> Plan {
        var plan = Plan()
        var cursor = "0"
        let head = sourcePrefix + ":"
        repeat {
            let reply = try await source.send("SCAN", cursor, "MATCH", RedisKeys.globEscaped(sourcePrefix) + ":*", "COUNT", "1000")
            guard let parts = reply.array, parts.count == 2, let next = parts[0].string else { throw RedisError.unexpectedReply("SCAN") }
            cursor = next
            for name in (parts[1].array ?? []).compactMap(\.string) where name.hasPrefix(head) {
                let rest = name.dropFirst(head.count)
                if rest.hasPrefix("{") { throw Failure.sourceHasBuckets(name) }
                if let family = KeyFamily(keyName: rest) {
                    plan.byFamily[family, default: []].append(String(rest))
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
        for family: KeyFamily in [.grant, .hold] {
            let prefix = "\(family):"
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
                    guard family == .grant, let user = values[1], values[3] == nil else { continue }
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

    /// Where a key the migration copies whole goes, `nil` for one it leaves.
    func destinationKey(of rest: String, family: KeyFamily, _ plan: Plan) -> String? {
        let after = String(rest.dropFirst(family.description.count + 1))
        switch family {
        case .claim: return keys.claim(unit: after, originalTransactionID: original(ofUnit: after, plan))
        case .grant: return keys.grant(unit: after, originalTransactionID: original(ofUnit: after, plan))
        case .hold: return keys.hold(unit: after, originalTransactionID: original(ofUnit: after, plan))
        case .refunded: return keys.refunded(unit: after, originalTransactionID: original(ofUnit: after, plan))
        case .owner: return keys.owner(originalTransactionID: after)
        case .subscription: return keys.subscription(originalTransactionID: after)
        case .notifications: return keys.notifications(originalTransactionID: after)
        case .timedGrants: return keys.ofTimedGrants(user: after).timedGrants(user: after)
        case .retentionRequest:
            guard let colon = after.firstIndex(of: ":") else { return nil }
            return keys.retentionRequest(
                originalTransactionID: String(after[..<colon]), requestID: String(after[after.index(after: colon)...]))
        case .ticket:
            if Self.isDeliveryTicket(after) { return nil }  // a user's delivery job: routed again
            return keys.ticket(plan.renamedTickets[after] ?? after)
        case .receipt: return keys.receipt(digest: after)
        case .notification:
            let bucket = plan.notificationBuckets[after] ?? keys.layout.bucket(ofNotification: after)
            return keys.inBucket(bucket).notification(uuid: after)
        case .consent: return keys.consent(user: after)
        case .consumption: return keys.consumption(user: after)
        case .refundRevision:
            guard let colon = after.firstIndex(of: ":") else { return nil }
            return keys.refundRevision(transactionID: String(after[after.index(after: colon)...]), environment: String(after[..<colon]))
        case .daily:
            guard let colon = after.lastIndex(of: ":") else { return nil }
            return keys.dailyWindow(user: String(after[..<colon]), product: String(after[after.index(after: colon)...]))
        case .accountToken: return keys.accountToken(after)
        case .userToken: return keys.userAccountToken(user: after)
        case .userAppleAccounts: return keys.userAppleAccounts(user: after)
        case .offerSignatures: return keys.offerSignatures(user: after)
        case .appleAccount: return keys.appleAccount(after)
        case .signature: return keys.clientSignature(after)
        case .notificationSweep: return keys.notificationSweep
        case .refundSweep: return keys.refundSweep
        case .refundCustomers: return keys.refundCustomers
        case .erasureSalt: return keys.erasureSalt
        case .erased: return keys.erased(pseudonym: rest)
        case .appleBreaker: return AppleService(rawValue: after).map(keys.appleBreaker)
        case .adoptionImport: return keys.adoptionImport(after)
        // A day's figures, whole, in the first bucket: a report sums every bucket's.
        case .figures: return FigureDay(after).map { keys.inBucket(0).figures(day: $0) }
        // The live count of subscribers, whole, in the first bucket: the records keep what they count
        // (`counted`), taken out of whichever bucket they are in when they change; a report sums every bucket's.
        case .subscribers: return keys.inBucket(0).subscribers
        case .console: return consoleKey(after)
        case .apple:
            let parts = after.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3, parts[0] == "hold" else { return nil }  // the permits of the last second: transient
            return keys.apiHold(environment: parts[1], endpoint: parts[2])
        case .queue, .inflight, .workers, .retry, .dead, .fulfilment, .userEvents, .rechecks, .lock, .results, .unclaimed, .holds,
             .webhook, .refunds, .refundsProrated, .purchases, .lifetime, .userSubscriptions, .rate, .intakes, .migrationGuard,
             .queueHistory, .timedGrantEnds:
            return nil
        }
    }

    /// A console key (no bucket: the same name): a session, a name's failed sign-ins (both keep
    /// their time to live), the audit.
    private func consoleKey(_ after: String) -> String? {
        if after == "audit" { return keys.consoleAudit }
        if after.hasPrefix("session:") { return keys.consoleSession(String(after.dropFirst("session:".count))) }
        if after.hasPrefix("signin:") { return keys.consoleSignInFailures(String(after.dropFirst("signin:".count))) }
        return nil
    }

    /// The families copied key by key (DUMP, then RESTORE … REPLACE with the time left to live).
    static let copied = KeyFamily.allCases.filter { treatment(of: $0) == .copied }

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
            if family == .notification {
                // A renamed notification ticket: its UUID names the new id.
                for (uuid, bucket) in plan.notificationBuckets {
                    let key = keys.inBucket(bucket).notification(uuid: uuid)
                    guard let old = try await source.send("GET", "\(sourcePrefix):notification:\(uuid)").string,
                          let new = plan.renamedTickets[old]
                    else { continue }
                    try await destination.send("SET", key, new, "KEEPTTL")
                }
            }
            report.add(family.rawValue, source: plan.names(family).count, moved: written)
        }
    }

    /// Each key of a copied family: its source name and where it goes (none for a key left).
    func copies(of family: KeyFamily, _ plan: Plan) -> [(source: String, destination: String)] {
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
