import ClusterHarness
import Foundation
import PipelineCore
import IAPStages
import IAPOperations
import RedisClient

/// The drill's books on its subscriptions, once they ended: every period apple-sim renewed was
/// granted exactly once, to its subscriber, whatever brought it (client, lost or duplicated
/// notifications, re-checks through kills); the record ends as Apple left it; and no entitlement
/// outlives the last period.
struct SubscriptionAudit {
    let store: PipelineStore
    let lease: Duration
    static let catalog = try! ProductCatalog(json: Data(LocalCluster.products.utf8))

    struct Books {
        var periods = 0
        var lost = 0
        var wrong = 0
        var findings: [String] = []
    }

    /// Waits (at most `timeout`) until each subscription's record says its last period and its
    /// end, none is scheduled any more, and no job is left anywhere.
    /// Returns what was still moving at the timeout, or `nil` once all settled.
    func settle(_ subscriptions: [PlannedSubscription], timeout: Duration) async -> String? {
        let deadline = ContinuousClock.now + timeout
        var moving = "nothing"
        while ContinuousClock.now < deadline {
            var settled = true
            for subscription in subscriptions {
                let key = store.keys.subscription(originalTransactionID: subscription.originalTransactionID)
                let record = (try? await store.redis.send("HGETALL", key).stringDictionary) ?? [:]
                let scheduled: Int64? = try? await store.recheckDue(originalTransactionID: subscription.originalTransactionID)
                if record["status"] != subscription.expectedStatus
                    || record["latest_transaction_id"] != subscription.plan.transactionID(period: subscription.plan.renewals ?? 0)
                    || scheduled != nil
                {
                    settled = false
                    moving = "\(subscription.originalTransactionID): \(record["status"] ?? "-"), latest \(record["latest_transaction_id"] ?? "-"), "
                        + "expected \(subscription.expectedStatus) at period \(subscription.plan.renewals ?? 0), re-check due \(scheduled.map(String.init) ?? "none")"
                    break
                }
            }
            if settled {
                guard let stats = try? await store.stats(lease: lease) else { continue }
                if TrialAudit.leftovers(stats) == 0 { return nil }
                moving = "jobs left: queues \(stats.queues), in flight \(stats.inflight), retry \(stats.retry)"
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return moving
    }

    func check(_ subscriptions: [PlannedSubscription]) async throws -> Books {
        var books = Books()
        var grants: [String: [String]] = [:]
        for entry in try await store.fulfilmentEntries() {
            let fields = entry.fields
            if let unit = fields["unit"], ["granted", "renewed", "released"].contains(fields["event"]) {
                grants[unit, default: []].append(fields["user_id"] ?? "?")
            }
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for subscription in subscriptions {
            for unit in subscription.units {
                let users = grants[unit] ?? []
                if users.isEmpty {
                    books.lost += 1
                    books.note("lost: period \(unit) of \(subscription.userID) never granted")
                } else if users != [subscription.userID] {
                    // Twice is a double grant (the books on all units count it); another user is wrong.
                    if Set(users) != [subscription.userID] {
                        books.wrong += 1
                        books.note("wrong: period \(unit) granted to \(users), not \(subscription.userID)")
                    }
                } else {
                    books.periods += 1
                }
            }
            let record = try await store.redis.send(
                "HGETALL", store.keys.subscription(originalTransactionID: subscription.originalTransactionID)).stringDictionary
            if record["status"] != subscription.expectedStatus || record["user_id"] != subscription.userID {
                books.wrong += 1
                books.note("wrong: \(subscription.originalTransactionID) ended \(record["status"] ?? "-") for \(record["user_id"] ?? "-")")
            }
            // No entitlement past the last period's end (the drill's subscriptions have no grace period).
            if now > subscription.endsAt {
                let entitlements = try await store.entitlements(user: subscription.userID, catalog: Self.catalog, now: now)
                if !entitlements.entitlements.isEmpty {
                    books.wrong += 1
                    books.note("wrong: \(subscription.userID) still entitled to \(entitlements.entitlements.map(\.entitlement)) after the end")
                }
            }
        }
        return books
    }
}

extension SubscriptionAudit.Books {
    mutating func note(_ finding: String) {
        if findings.count < 4 { findings.append(finding) }
    }
}
