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

    /// Every key family `RedisKeys` names has a row (by the part after the prefix).
    @Test func everyFamilyHasARow() throws {
        let file = DocsLinkTests.root.appendingPathComponent("docs/operations/redis-keys.md")
        let document = try String(contentsOf: file, encoding: .utf8)
        let keys = RedisKeys()
        let families = [
            keys.queue(.verify), keys.workers, keys.retry, keys.dead, keys.fulfilment, keys.appleBreaker(.verifyReceipt),
            keys.appleBreaker(.serverAPI), keys.refundSweep, keys.notificationSweep, keys.intakes,
            keys.refunds(user: "<user-id>"), keys.refundsProrated(user: "<user-id>"), keys.purchases(user: "<user-id>"),
            keys.consoleSession("<sha256 hex>"),
        ]
        for family in families { #expect(document.contains("`\(family)"), "\(family) is not in the key map") }
    }
}
