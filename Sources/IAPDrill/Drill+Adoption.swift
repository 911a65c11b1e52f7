import ClusterHarness
import Foundation
import PipelineCore
import RedisClient

/// The adoption trial's phases: players made known to apple-sim before the load; the import and
/// the syncs while the faults run; the books after the drain.
extension Drill {
    func startAdoption(_ adoption: PlannedAdoption, on cluster: LocalCluster) async throws {
        for player in adoption.players { _ = try await cluster.registerPlayer(player) }
        for transaction in adoption.fresh { _ = try await cluster.registerTransaction(transaction) }
    }

    /// The old system's export imported (run again until it finishes: a fault may stop it, and
    /// the next run goes on where it got to), then once more (every row seen), then a sync of
    /// every player. Returns each player's sync ticket (by user) and what went wrong.
    func runAdoption(
        _ adoption: PlannedAdoption, on cluster: LocalCluster
    ) async throws -> (tickets: [String: String], findings: [String]) {
        let file = cluster.directory.appendingPathComponent("adoption.ndjson")
        try Data(adoption.exportFile.utf8).write(to: file)
        let rows = adoption.exportFile.split(separator: "\n").count
        var findings: [String] = []
        for pass in 1...2 {
            guard let report = try await untilDone({ try await Self.importReport(cluster.iapctl(["adopt", "import", file.path, "--json"])) })
            else {
                findings.append("wrong: adoption import pass \(pass) never finished")
                continue
            }
            let (read, imported, seen) = (report["read"] ?? 0, report["imported"] ?? 0, report["seen"] ?? 0)
            if read != rows || imported + seen != rows || (report["conflicts"] ?? 0) + (report["invalid"] ?? 0) > 0 || (pass == 2 && seen != rows) {
                findings.append("wrong: adoption import pass \(pass) of \(rows) rows: \(report)")
            }
        }
        var tickets: [String: String] = [:]
        for (player, user) in zip(adoption.players, adoption.users) {
            let sync = { try await Self.syncTicket(cluster.iapctl(["user", "sync", user, "--app-transaction-id", player.appTransactionID, "--json"])) }
            if let ticket = try await untilDone(sync) { tickets[user] = ticket } else { findings.append("wrong: \(user)'s sync was never accepted") }
        }
        progress("adoption: \(rows) rows imported twice, \(tickets.count) players synced")
        return (tickets, findings)
    }

    /// `body` until it answers (a fault may fail a run), at most 30 tries a second apart.
    private func untilDone<T: Sendable>(_ body: () async throws -> T?) async throws -> T? {
        for _ in 0..<30 {
            if let done = try await body() { return done }
            try await Task.sleep(for: .seconds(1))
        }
        return nil
    }

    /// An import's counts from its `--json` report; `nil`: it did not finish (no report).
    static func importReport(_ run: (status: Int32, output: String)) -> [String: Int]? {
        guard let start = run.output.firstIndex(of: "{"),
              let object = try? JSONSerialization.jsonObject(with: Data(run.output[start...].utf8)) as? [String: Any],
              object["read"] != nil
        else { return nil }
        return object.compactMapValues { $0 as? Int }
    }

    static func syncTicket(_ run: (status: Int32, output: String)) -> String? {
        guard run.status == 0, let start = run.output.firstIndex(of: "["),
              let items = try? JSONSerialization.jsonObject(with: Data(run.output[start...].utf8)) as? [[String: String]]
        else { return nil }
        return items.first?["ticket"]
    }

    /// The books of the adoption: no purchase made before the cutover granted (`granted`,
    /// `renewed` or `released`), each either imported or adopted once; each bought after it
    /// granted once; all to their player.
    func auditAdoption(
        _ adoption: PlannedAdoption, syncs: [String: String], store: PipelineStore
    ) async throws -> (lost: Int, double: Int, grantedBeforeCutover: Int, notes: [String]) {
        var events: [String: [(event: String, user: String)]] = [:]
        for entry in try await store.fulfilmentEntries() {
            guard let unit = entry.fields["unit"] else { continue }
            events[unit, default: []].append((entry.fields["event"] ?? "", entry.fields["user_id"] ?? ""))
        }
        let grants: Set<String> = ["granted", "renewed", "released"]
        var lost = 0, double = 0, early = 0
        var notes: [String] = []
        // How each sync ended: what to start from when a player's purchases are found missing.
        var ended: [String: String] = [:]
        for (user, ticket) in syncs {
            let read = try await store.ticket(ticket)
            ended[user] = "sync \(ticket) ended \(read?.status.rawValue ?? "gone")/\(read?.reason ?? "-")/\(read?.result ?? "-")"
            guard let read, ![.granted, .duplicate, .applied].contains(read.status) else { continue }
            notes.append("a sync ended \(read.status.rawValue)/\(read.reason ?? "-"): ticket \(ticket), \(read.lastError ?? "")")
        }
        for purchase in adoption.purchases {
            let seen = events[purchase.unit] ?? []
            let granted = seen.filter { grants.contains($0.event) }, adopted = seen.filter { $0.event == "adopted" }
            if (granted + adopted).contains(where: { $0.user != purchase.user }) {
                double += 1
                notes.append("double: \(purchase.unit) went to another user than \(purchase.user): \(seen)")
            }
            guard purchase.before else {
                if granted.count == 0 {
                    lost += 1
                    notes.append("lost: \(purchase.unit) bought after the cutover, never granted (\(ended[purchase.user] ?? "no sync"))")
                }
                if granted.count > 1 || !adopted.isEmpty { double += 1; notes.append("double: \(purchase.unit): \(seen.map(\.event))") }
                continue
            }
            if !granted.isEmpty { early += 1; notes.append("granted before the cutover: \(purchase.unit): \(seen.map(\.event))") }
            let claim = try await store.redis.send("GET", store.keys.claim(unit: purchase.unit, originalTransactionID: purchase.original)).string
            let imported = claim?.hasPrefix("import:") == true
            if adopted.count > 1 || (imported && !adopted.isEmpty) {
                double += 1
                notes.append("double: \(purchase.unit) imported \(imported), adopted \(adopted.count) times")
            } else if !imported && adopted.isEmpty {
                lost += 1
                notes.append("lost: \(purchase.unit) of \(purchase.user) neither imported nor adopted (\(ended[purchase.user] ?? "no sync"))")
            }
        }
        return (lost, double, early, notes)
    }
}
