import Foundation
import PipelineCore
import IAPStages
import Testing

/// Every Redis key family in the key map says its bound (issue 38, item 6): a family added
/// without one fails here, before it can grow without end in a deployment that runs for months.
@Suite struct KeyMapBoundsTests {
    /// How a bound may begin: a time to live, a cap, a window trimmed, drained by a stage, fixed
    /// fields, one per live thing, kept for ever as the ledger (with its bytes), or not stored.
    static let kinds = ["TTL: ", "cap: ", "trimmed: ", "drained", "fixed: ", "one per ", "ledger: ", "never "]

    @Test func everyFamilySaysItsBound() throws {
        let file = DocsLinkTests.root.appendingPathComponent("docs/operations/redis-keys.md")
        let document = try String(contentsOf: file, encoding: .utf8)
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex(of: "| key | type | what | bound |"), "the key map lost its bound column")
        let rows = lines[(header + 2)...].prefix { $0.hasPrefix("| ") }
        #expect(rows.count >= 40, "the key map has \(rows.count) rows")
        for row in rows {
            // The last cell (cells may hold an escaped `\|`).
            let cells = row.replacingOccurrences(of: "\\|", with: "¦").split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let bound = cells.last ?? ""
            #expect(cells.count == 4 && Self.kinds.contains { bound.hasPrefix($0) }, "no bound: \(cells.first ?? row)")
            if bound.hasPrefix("ledger: ") {
                #expect(bound.contains(" B ") || bound.contains(" KB "), "a ledger family without its bytes: \(cells.first ?? row)")
            }
        }
    }

    /// Every family of the one list (`KeyFamily`, which `RedisKeys` spells its names with and
    /// `iapctl migrate` has a rule for) has a row in the key map, found by a name `RedisKeys`
    /// makes of it, and the name is of that family.
    @Test func everyFamilyHasARow() throws {
        let file = DocsLinkTests.root.appendingPathComponent("docs/operations/redis-keys.md")
        let document = try String(contentsOf: file, encoding: .utf8)
        let keys = RedisKeys()
        for family in KeyFamily.allCases {
            let name = Self.example(of: family, keys)
            #expect(document.contains("`\(name)"), "\(family.rawValue): \(name) is not in the key map")
            if family != .migrationGuard {
                #expect(KeyFamily(keyName: name.dropFirst("iap:".count)) == family, "\(name) is not of \(family.rawValue)")
            }
        }
    }

    /// A name of each family, as the key map's table writes it.
    static func example(of family: KeyFamily, _ keys: RedisKeys) -> String {
        let user = "<user-id>", unit = "<grant-unit>", original = "<original_transaction_id>"
        switch family {
        case .queue: return keys.queue(.verify)
        case .inflight: return keys.inflight(member: "<stage>:<worker-id>")
        case .workers: return keys.workers
        case .retry: return keys.retry
        case .dead: return keys.dead
        case .fulfilment: return keys.fulfilment
        case .userEvents: return keys.userEvents
        case .figures: return keys.figures(day: FigureDay(number: 0)).replacingOccurrences(of: "1970-01-01", with: "<YYYY-MM-DD>")
        case .subscribers: return keys.subscribers
        case .rechecks: return keys.rechecks
        case .lock: return keys.reaperLock
        case .results: return keys.results
        case .unclaimed: return keys.unclaimed
        case .holds: return keys.holds
        case .webhook: return keys.webhookEvents(user: user)
        case .claim: return keys.claim(unit: unit, originalTransactionID: unit)
        case .grant: return keys.grant(unit: unit, originalTransactionID: unit)
        case .hold: return keys.hold(unit: unit, originalTransactionID: unit)
        case .refunded: return keys.refunded(unit: unit, originalTransactionID: unit)
        case .owner: return keys.owner(originalTransactionID: original)
        case .subscription: return keys.subscription(originalTransactionID: original)
        case .notifications: return keys.notifications(originalTransactionID: original)
        case .refundRevision: return keys.refundRevision(transactionID: "<transaction_id>", environment: "<environment>")
        case .timedGrants: return keys.timedGrants(user: user)
        case .timedGrantEnds: return keys.timedGrantEnds
        case .retentionRequest: return keys.retentionRequest(originalTransactionID: original, requestID: "<request-id>")
        case .ticket: return keys.ticket("<ticket>")
        case .receipt: return keys.receipt(digest: "<sha256>")
        case .notification: return keys.notification(uuid: "<uuid>")
        case .refunds: return keys.refunds(user: user)
        case .refundsProrated: return keys.refundsProrated(user: user)
        case .purchases: return keys.purchases(user: user)
        case .lifetime: return keys.lifetime(user: user)
        case .userSubscriptions: return keys.subscriptions(user: user)
        case .daily: return keys.dailyWindow(user: user, product: "<product-id>")
        case .consent: return keys.consent(user: user)
        case .consumption: return keys.consumption(user: user)
        case .userToken: return keys.userAccountToken(user: user)
        case .userAppleAccounts: return keys.userAppleAccounts(user: "<user>")
        case .offerSignatures: return keys.offerSignatures(user: "<user>")
        case .rate: return keys.rateWindow(clientKey: "<key-id>", second: 0).replacingOccurrences(of: ":0", with: ":<unix-second>")
        case .appleAccount: return keys.appleAccount("<appTransactionId>")
        case .accountToken: return keys.accountToken("<uuid>")
        case .erasureSalt: return keys.erasureSalt
        case .erased: return keys.erased(pseudonym: "erased:<hex>")
        case .apple: return keys.apiHold(environment: "<production\\|sandbox>", endpoint: "<endpoint>")
        case .appleBreaker: return keys.appleBreaker(.verifyReceipt)
        case .signature: return keys.clientSignature("<hex>")
        case .console: return keys.consoleSession("<sha256 hex>")
        case .intakes: return keys.intakes
        case .queueHistory: return keys.queueHistory
        case .notificationSweep: return keys.notificationSweep
        case .refundSweep: return keys.refundSweep
        case .refundCustomers: return keys.refundCustomers
        case .adoptionImport: return keys.adoptionImport("<digest>")
        case .migrationGuard: return "iap:{<tag>}:migration-guard"
        }
    }
}
