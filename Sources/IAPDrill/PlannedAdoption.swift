import AppleJWS
import AppleSimulator
import ClusterHarness
import Foundation

/// The adoption trial's players (issue 54): each with two years of purchases at Apple made
/// before the pipeline's cutover and one bought after it; the first half imported from a file as
/// the old system's grants (`iapctl adopt import`, run twice: the second finds every row seen),
/// then every player synced (`iapctl user sync`), all while the trial's faults run.
struct PlannedAdoption: Sendable {
    /// The cutover every adoption trial runs with (`IAP_ADOPTED_AT`): before the dates the drill's
    /// own receipts carry (1,700,000,000,000), so only the players' history lies before it.
    static let cutover: Int64 = 1_698_000_000_000
    static let day: Int64 = 86_400_000

    var players: [SimulatedPlayer]
    /// One consumable each player bought after the cutover (never sent by the client: the sync finds it).
    var fresh: [JWSTransaction]
    /// How many of the players (the first) the old system's export names.
    var imported: Int

    var users: [String] { players.indices.map { "adopter-\(players[$0].appTransactionID)" } }

    static var cutoverText: String { Date(timeIntervalSince1970: Double(cutover) / 1000).formatted(.iso8601) }

    static func plan(count: Int, trial: Int) -> PlannedAdoption {
        var players: [SimulatedPlayer] = []
        var fresh: [JWSTransaction] = []
        for index in 0..<count {
            let account = String(706_000_000_000_000 + Int64(trial) * 1000 + Int64(index))
            var player = SimulatedPlayer(
                appTransactionID: account, bundleID: LocalCluster.bundleID,
                firstTransactionID: 3_000_000_000_000_000 + Int64(trial) * 100_000 + Int64(index) * 100, now: cutover + 10 * day)
            player.consumable = "drill.gold"
            player.nonConsumable = "drill.pack"
            player.subscription = "drill.vip"
            players.append(player)
            var bought = JWSTransaction(
                transactionID: String(player.firstTransactionID + 99), bundleID: LocalCluster.bundleID, productID: "drill.gold",
                purchaseDate: cutover + day, type: "Consumable", environment: "Production")
            bought.appTransactionID = account
            fresh.append(bought)
        }
        return PlannedAdoption(players: players, fresh: fresh, imported: count / 2)
    }

    /// What the old system granted: every purchase of the imported players made before the
    /// cutover, a subscription once (its original transaction), as NDJSON.
    var exportFile: String {
        var lines: [String] = []
        for (player, user) in zip(players.prefix(imported), users) {
            var subscribed = false
            for transaction in player.transactions where (transaction.purchaseDate ?? 0) < Self.cutover {
                if transaction.productID == player.subscription {
                    if subscribed { continue }
                    subscribed = true
                }
                let row: [String: String] = [
                    "user_id": user, "original_transaction_id": transaction.originalTransactionID,
                    "transaction_id": transaction.transactionID, "product_id": transaction.productID,
                    "purchase_date": Date(timeIntervalSince1970: Double(transaction.purchaseDate ?? 0) / 1000).formatted(.iso8601),
                ]
                lines.append(String(decoding: try! JSONSerialization.data(withJSONObject: row, options: [.sortedKeys]), as: UTF8.self))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Each purchase of every player, with its grant unit and whether it was made before the cutover.
    var purchases: [(user: String, unit: String, original: String, before: Bool)] {
        var all: [(String, String, String, Bool)] = []
        for (index, player) in players.enumerated() {
            for transaction in player.transactions + [fresh[index]] {
                let unit = switch transaction.productID {
                case player.nonConsumable: transaction.originalTransactionID
                case player.subscription: "wol:\(transaction.webOrderLineItemID ?? "")"
                default: transaction.transactionID
                }
                all.append((users[index], unit, transaction.originalTransactionID, (transaction.purchaseDate ?? 0) < Self.cutover))
            }
        }
        return all
    }
}
