/// Every family of Redis keys (and the one channel) the pipeline names, by the segment that
/// follows the prefix and any bucket's or user's tag: `iap:txn:<unit>` is of `claim`.
///
/// The one list that the key map, the ledger migration and the key map's bounds test read, so
/// that a family cannot be added to one and forgotten by another: `RedisKeys` spells every
/// name with its family (`RedisKeys.join(prefix, KeyFamily.claim.description, unit)`); `iapctl migrate` decides
/// what becomes of each family in a switch with no default (a new case does not compile until
/// it says); the bounds test wants a row with a bound in docs/operations/redis-keys.md for each.
///
/// `rawValue` is the family's name in the migration's report; `description` its segment in key
/// names. The two differ for `holds`, the index of holds, whose name is the segment `held` alone
/// (a hold itself is `held:<unit>`).
package enum KeyFamily: String, CaseIterable, Sendable, CustomStringConvertible {
    // A bucket's machinery.
    case queue, inflight, workers, retry, dead, fulfilment
    case userEvents = "user-events"
    case figures, subscribers
    case rechecks, lock, results, unclaimed
    case holds
    case webhook
    // A purchase's.
    case claim = "txn"
    case grant
    case hold = "held"
    case refunded, owner, subscription, notifications
    case refundRevision = "refund-revision"
    case retentionRequest = "retention-request"
    case timedGrants = "timed-grants"
    case timedGrantEnds = "timed-grant-ends"
    // A ticket's, a submission's, a notification's.
    case ticket, receipt, notification
    // A user's.
    case refunds
    case refundsProrated = "refunds-prorated"
    case purchases, lifetime
    case userSubscriptions = "user-subscriptions"
    case daily, consent, consumption
    case userToken = "user-token"
    case userAppleAccounts = "user-apple-accounts"
    case offerSignatures = "offer-signatures"
    case rate
    // An Apple Account's, a token's, an erased user's.
    case appleAccount = "apple-account"
    case accountToken = "account-token"
    case erasureSalt = "erasure-salt"
    case erased
    // The fleet's.
    case apple
    case appleBreaker = "apple-breaker"
    case signature, console, intakes
    case queueHistory = "queue-history"
    case notificationSweep = "notification-sweep"
    case refundSweep = "refund-sweep"
    case refundCustomers = "refund-customers"
    case adoptionImport = "adopt-import"
    /// Named by every script call, never written.
    case migrationGuard = "migration-guard"

    /// The segment of a key name that says its family.
    package var description: String { self == .holds ? "held" : rawValue }

    /// The family of a key name given without its prefix (`txn:<unit>`, `held`), as a ledger with
    /// one bucket names it; `nil` for a name of no family.
    package init?(keyName rest: Substring) {
        let segment = rest.prefix { $0 != ":" }
        if segment == "held" {
            self = segment.count == rest.count ? .holds : .hold
        } else if segment != "holds", let family = KeyFamily(rawValue: String(segment)) {
            self = family
        } else {
            return nil
        }
    }
}
