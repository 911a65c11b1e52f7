import ClusterHarness
import Foundation
import PipelineCore
import IAPStages
import IAPOperations
import RedisClient

/// Waits for a trial to drain, then checks its books against what each receipt's scenario dictates.
struct TrialAudit {
    let store: PipelineStore
    let lease: Duration

    /// Polls until each of `units` (consumables: the unit is its original transaction) has its
    /// grant revoked, or the timeout passes; returns how many were. Polling: what revokes them is
    /// the notifiers' refund sweep, on its own schedule.
    func awaitRevoked(_ units: [String], timeout: Duration) async -> Int {
        let deadline = ContinuousClock.now + timeout
        var revoked: Set<String> = []
        while true {
            for unit in units where !revoked.contains(unit) {
                let reply = try? await store.redis.send("HEXISTS", store.keys.grant(unit: unit, originalTransactionID: unit), "revoked_at")
                if reply?.int == 1 { revoked.insert(unit) }
            }
            if revoked.count == units.count || ContinuousClock.now >= deadline { return revoked.count }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    /// Polls until every accepted ticket is terminal (or held by the purchase policy) and nothing
    /// is queued, in flight or waiting for a retry, or the timeout passes. Returns the tickets seen
    /// settled and the time it took.
    func drain(_ tickets: Set<String>, timeout: Duration) async -> (terminal: [String: Ticket], seconds: Double) {
        let start = ContinuousClock.now
        var terminal: [String: Ticket] = [:]
        var pending = tickets
        while ContinuousClock.now - start < timeout {
            for id in pending {
                let read: Ticket?
                do { read = try await store.ticket(id) } catch { continue }
                if let ticket = read, ticket.status.isTerminal || ticket.status == .held {
                    terminal[id] = ticket
                    pending.remove(id)
                } else if read == nil {
                    pending.remove(id)  // the hash is gone (Redis lost it): it can never finish
                }
            }
            if pending.isEmpty, let stats = try? await store.stats(lease: lease), Self.leftovers(stats) == 0 { break }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return (terminal, (ContinuousClock.now - start).seconds)
    }

    /// Releases every purchase the purchase policy held, as an operator would once the trial is
    /// over, and reads their tickets again. Returns how many were released and what else happened.
    func releaseHeld(_ terminal: inout [String: Ticket]) async throws -> (released: Int, findings: [String]) {
        var released = 0
        var findings: [String] = []
        while true {
            let held = try await store.heldPurchases(limit: 500)
            if held.isEmpty { break }
            for purchase in held {
                let result = try await store.releaseHeld(unit: purchase.unit, by: "iap-drill", note: "end of trial")
                if result == .decided("released") {
                    released += 1
                } else {
                    findings.append("wrong: releasing held unit \(purchase.unit) gave \(result)")
                }
                if terminal[purchase.ticket] != nil, let ticket = try await store.ticket(purchase.ticket) {
                    terminal[purchase.ticket] = ticket
                }
            }
            if !findings.isEmpty { break }
        }
        return (released, findings)
    }

    /// Each failover with the time from its kill to the first grant after it: the first
    /// `granted` entry of the fulfilment stream whose id (the writing primary's clock) is later.
    func timings(of failovers: [LocalCluster.Failover]) async throws -> [FailoverTiming] {
        var timings: [FailoverTiming] = []
        for failover in failovers {
            var firstGrant: Double?
            for entry in try await store.fulfilmentEntries(after: "\(failover.killedAtMs)-\(Int64.max)") {
                guard entry.fields["event"] ?? "granted" == "granted", let ms = entry.id.split(separator: "-").first.flatMap({ Int64($0) })
                else { continue }
                firstGrant = Double(ms - failover.killedAtMs) / 1000
                break
            }
            timings.append(
                FailoverTiming(promotedSeconds: failover.promotedSeconds, firstGrantSeconds: firstGrant, wholeSeconds: failover.wholeSeconds))
        }
        return timings
    }

    /// The pipeline's queues once nothing is left in them, or as they are after `timeout`: the
    /// stages' housekeeping queues work of its own (a re-check falling due, a refund found by the
    /// sweep) while the books are read, and a job that finishes in time was never stuck.
    func settledStats(within timeout: Duration) async throws -> PipelineStats {
        let deadline = ContinuousClock.now + timeout
        while true {
            let stats = try await store.stats(lease: lease)
            if Self.leftovers(stats) == 0 || ContinuousClock.now >= deadline { return stats }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    static func leftovers(_ stats: PipelineStats) -> Int {
        stats.queues.values.reduce(0, +) + stats.inflight.values.reduce(0, +) + stats.retry
    }

    struct Books {
        var lost = 0
        var doubleGrants = 0
        var stuck = 0
        var wrong = 0
        var poisonDeadLettered = 0
        var refundsRevoked = 0
        var refundsBeforeGrant = 0
        /// Capped purchases held by the daily cap, then released by the drill.
        var held = 0
        var examples: [String] = []

        mutating func note(_ finding: String) {
            if examples.count < 8 { examples.append(finding) }
        }
    }

    func check(plan: [PlannedReceipt], tickets: [String?], terminal: [String: Ticket]) async throws -> Books {
        var books = Books()
        let accepted = Set(tickets.compactMap { $0 })
        await countLost(accepted, terminal: terminal, into: &books)

        // Fulfilment events per grant unit, in stream order: more than one grant (`granted`, or
        // `released` after a hold) is a double grant, and so is a grant after a `revoked`.
        var events: [String: [String]] = [:]
        let entries = try await store.fulfilmentEntries()
        try await checkUserEvents(entries, into: &books)
        for entry in entries {
            let fields = entry.fields
            if let unit = fields["unit"] { events[unit, default: []].append(fields["event"] ?? "granted") }
        }
        let grants: Set<String> = ["granted", "released", "renewed"]
        let fulfilments = events.mapValues { $0.filter(grants.contains).count }
        var doubled = Set(fulfilments.filter { $0.value > 1 }.keys)
        for (unit, sequence) in events {
            if let revoked = sequence.firstIndex(of: "revoked"), sequence[revoked...].contains(where: grants.contains) { doubled.insert(unit) }
        }
        checkDailyCap(plan: plan, tickets: tickets, events: events, into: &books)
        let revocations = events.mapValues { $0.filter { $0 == "revoked" }.count }

        // Tickets per grant unit: exactly one granted, the others duplicate.
        var ticketsByUnit: [String: Set<String>] = [:]
        for receipt in plan {
            guard let ticket = tickets[receipt.index], let final = terminal[ticket] else { continue }
            switch receipt.scenario {
            case .resubmitted:
                if let original = receipt.sameTicketAs, let first = tickets[original], first != ticket {
                    books.wrong += 1
                    books.note("wrong: resubmitted receipt #\(receipt.index) got ticket \(ticket), not \(first)")
                }
            case .invalid:
                if final.status != .rejected || final.reason != "apple_status_21003" {
                    books.wrong += 1
                    books.note("wrong: invalid receipt #\(receipt.index) ended \(final.status.rawValue)/\(final.reason ?? "-")")
                }
            case .refunded:
                // Refunded before its grant: never granted. After: granted, then revoked exactly once.
                guard let unit = receipt.unit else { continue }
                let refusedAsRefunded = final.status == .rejected && final.transactions.first?.reason == "refunded"
                let grantedThenRevoked = final.status == .granted && revocations[unit, default: 0] == 1
                    && fulfilments[unit, default: 0] == 1
                if refusedAsRefunded && fulfilments[unit, default: 0] == 0 {
                    books.refundsBeforeGrant += 1
                } else if grantedThenRevoked {
                    books.refundsRevoked += 1
                } else {
                    books.wrong += 1
                    books.note(
                        "wrong: refunded unit \(unit) ended \(final.status.rawValue)/\(final.reason ?? "-") with events \(events[unit] ?? [])")
                }
            default:
                guard let unit = receipt.unit else { continue }
                ticketsByUnit[unit, default: []].insert(ticket)
            }
        }
        doubled.formUnion(checkUnits(ticketsByUnit, terminal: terminal, fulfilments: fulfilments, into: &books))
        // Only refunded purchases are ever revoked.
        let refundedUnits = Set(plan.filter { $0.scenario == .refunded }.compactMap(\.unit))
        for (unit, count) in revocations where count > 0 && !refundedUnits.contains(unit) {
            books.wrong += 1
            books.note("wrong: unit \(unit) revoked without a refund")
        }
        books.doubleGrants = doubled.count
        for unit in doubled.sorted().prefix(3) { books.note("double grant: unit \(unit), \(fulfilments[unit, default: 0]) fulfilment entries") }

        let stats = try await settledStats(within: .seconds(30))
        books.stuck = Self.leftovers(stats)
        if books.stuck > 0 { books.note("stuck: queues \(stats.queues), in flight \(stats.inflight), retry \(stats.retry)") }

        // Dead letters that belong to no accepted ticket are the poison the drill pushed.
        for entry in try await store.deadLetters(limit: 100_000) {
            let letter = try? DeadLetter.decode(entry)
            if letter?.ticket.map(accepted.contains) != true { books.poisonDeadLettered += 1 }
        }
        return books
    }

    /// Accepted tickets that never ended: lost (a few named, so room is left for the other findings).
    private func countLost(_ accepted: Set<String>, terminal: [String: Ticket], into books: inout Books) async {
        for id in accepted.sorted() where terminal[id] == nil {
            books.lost += 1
            guard books.lost <= 3 else { continue }
            let status = (try? await store.ticket(id))??.status.rawValue ?? "missing"
            books.note("lost: ticket \(id) is \(status)")
        }
    }

    /// The daily cap: each player's first purchases of the capped product are granted at once,
    /// up to the cap, and every other one is held, then released: no more, no fewer.
    /// Each user's events index (`user-events`) against the streams, written in the same steps
    /// through every crash: in each bucket, a user's newest 100 entries and nothing else.
    private func checkUserEvents(_ entries: [FulfilmentEntry], into books: inout Books) async throws {
        var expected: [String: [String]] = [:]
        for entry in entries {
            guard let user = entry.fields["user_id"], !user.isEmpty else { continue }
            expected["\(entry.bucket) \(user)", default: []].append(entry.id)
        }
        var indexed: [String: [String]] = [:]
        for (bucket, keys) in store.keys.everyBucket.enumerated() {
            for member in try await store.redis.send("ZRANGE", keys.userEvents, "0", "-1").checked().array?.compactMap(\.string) ?? [] {
                guard let (user, event) = UserEvent.parse(member: member, bucket: bucket) else { continue }
                indexed["\(bucket) \(user)", default: []].append(event.entryID)
            }
        }
        for key in Set(expected.keys).union(indexed.keys).sorted() {
            let want = Array(expected[key, default: []].suffix(RedisKeys.userEventsCap))
            guard indexed[key, default: []] != want else { continue }
            books.wrong += 1
            books.note("wrong: the events index of (bucket, user) \(key) holds \(indexed[key, default: []].count), the stream's newest \(want.count)")
        }
    }

    private func checkDailyCap(plan: [PlannedReceipt], tickets: [String?], events: [String: [String]], into books: inout Books) {
        var capped: [String: [String]] = [:]
        for receipt in plan where receipt.scenario == .capped && tickets[receipt.index] != nil {
            if let unit = receipt.unit { capped[receipt.userID, default: []].append(unit) }
        }
        for (user, units) in capped.sorted(by: { $0.key < $1.key }) {
            let direct = units.filter { events[$0] == ["granted"] }.count
            let heldThenReleased = units.filter { events[$0] == ["held", "released"] }.count
            books.held += heldThenReleased
            if direct != min(units.count, LocalCluster.gemDailyLimit) || direct + heldThenReleased != units.count {
                books.wrong += 1
                books.note("wrong: \(user) bought the capped product \(units.count) times: \(direct) granted, \(heldThenReleased) held then released")
            }
        }
    }

    /// Each grant unit's tickets: exactly one granted (with its fulfilment entry), the others
    /// duplicate. Returns the units granted twice.
    private func checkUnits(
        _ ticketsByUnit: [String: Set<String>], terminal: [String: Ticket], fulfilments: [String: Int], into books: inout Books
    ) -> Set<String> {
        var doubled = Set<String>()
        for (unit, unitTickets) in ticketsByUnit.sorted(by: { $0.key < $1.key }) {
            let statuses = unitTickets.compactMap { terminal[$0]?.status }
            let granted = statuses.filter { $0 == .granted }.count
            if granted > 1 { doubled.insert(unit) }
            let others = statuses.filter { $0 != .granted && $0 != .duplicate }
            if granted == 0 || !others.isEmpty {
                books.wrong += 1
                let reasons = unitTickets.compactMap { terminal[$0] }.map { "\($0.status.rawValue)/\($0.reason ?? "-")" }
                books.note("wrong: unit \(unit) ended \(reasons.sorted())")
            } else if granted == 1 && fulfilments[unit, default: 0] == 0 {
                books.wrong += 1
                books.note("wrong: unit \(unit) granted without a fulfilment entry")
            }
        }
        return doubled
    }
}
