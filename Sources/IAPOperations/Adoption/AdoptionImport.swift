import AppStoreServerAPI
import Crypto
import Foundation
import IAPStages
import PipelineCore
import RedisClient

/// `iapctl adopt import`: what a studio's old system granted, read from a file (NDJSON, or CSV
/// with a header) and taken into the books one row at a time (`import_purchase`), so that no
/// purchase it granted is granted again. Paced (`rate` rows a second, `batch` at once) beside a
/// running pipeline; resumable: where it got to is kept in Redis (`adopt-import:<file digest>`)
/// after each batch and read at the next run of the same file, and forgotten when it finishes
/// (a run after that reads every row again, each `seen`). A bad line is counted and named,
/// never fatal.
package struct AdoptionImport: Sendable {
    package let store: PipelineStore
    package let catalog: ProductCatalog
    /// Rows a second, at most.
    package var rate = 2_000
    /// Rows in flight at once (and between two saves of the place).
    package var batch = 200
    package var dryRun = false

    package init(store: PipelineStore, catalog: ProductCatalog) {
        self.store = store
        self.catalog = catalog
    }

    /// What an import did (a dry run: would do).
    package struct Report: Sendable, Equatable, Encodable {
        package var read = 0, imported = 0, seen = 0, conflicts = 0, invalid = 0
        /// Lines resumed past (done by an earlier run that was stopped).
        package var resumedAfter = 0
        package var dryRun = false
        /// Each conflict and invalid line: `line N: …`.
        package var problems: [String] = []

        enum CodingKeys: String, CodingKey {
            case read, imported, seen, conflicts, invalid, problems
            case resumedAfter = "resumed_after"
            case dryRun = "dry_run"
        }
    }

    /// Imports the file's lines (`text`: its whole content); `problem`: told each conflict and invalid line as found.
    package func run(_ data: Data, problem: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        let digest = Self.digest(of: data)
        let place = store.keys.adoptionImport(digest)
        var report = Report(dryRun: dryRun)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let header = try Self.header(of: lines)
        let resumed = dryRun ? 0 : try await resume(place, into: &report)
        var pending: [(line: Int, row: ImportRow)] = []
        var index = 0
        let clock = ContinuousClock()
        var started = clock.now
        for raw in lines {
            index += 1
            let text = raw.hasSuffix("\r") ? String(raw.dropLast()) : String(raw)
            if index == 1 && header != nil { continue }
            if index <= resumed || text.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            report.read += 1
            do {
                pending.append((index, try row(text, header: header)))
            } catch {
                report.invalid += 1
                note("line \(index): invalid: \(error)", &report, problem)
            }
            if pending.count >= batch {
                try await apply(pending, digest: digest, into: &report, problem: problem)
                try await save(place, line: index, report)
                pending.removeAll(keepingCapacity: true)
                try await pace(&started, rows: batch, clock: clock)
            }
        }
        try await apply(pending, digest: digest, into: &report, problem: problem)
        if !dryRun { _ = try await store.redis.send("DEL", place).checked() }
        return report
    }

    /// What names a file's place: the first 12 bytes of its SHA-256, hex.
    static func digest(of data: Data) -> String {
        SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
    }

    /// The CSV header's columns, or `nil` for NDJSON (a first line that starts `{`).
    static func header(of lines: [Substring]) throws -> [String]? {
        guard let first = lines.first(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) else { return nil }
        if first.trimmingCharacters(in: .whitespaces).hasPrefix("{") { return nil }
        let columns = try ImportRow.cells(csv: String(first)).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard columns.contains("user_id"), columns.contains("original_transaction_id") else {
            throw ImportRowError("the file is neither NDJSON nor CSV with a header naming user_id, original_transaction_id, product_id, purchase_date")
        }
        return columns
    }

    func row(_ text: String, header: [String]?) throws(ImportRowError) -> ImportRow {
        guard let header else { return try ImportRow(fields: try ImportRow.fields(json: text), catalog: catalog) }
        let cells = try ImportRow.cells(csv: text)
        guard cells.count == header.count else { throw ImportRowError("\(cells.count) cells, the header names \(header.count)") }
        return try ImportRow(fields: Dictionary(zip(header, cells), uniquingKeysWith: { first, _ in first }), catalog: catalog)
    }

    /// The rows, at once but for rows of one purchase (its unit), which go in the file's order:
    /// the first user a file names for a purchase is its owner, the others conflicts. Each
    /// outcome counted (a dry run reads what each would meet).
    func apply(_ rows: [(line: Int, row: ImportRow)], digest: String, into report: inout Report, problem: (String) -> Void) async throws {
        guard !rows.isEmpty else { return }
        let now = currentTimeMs()
        var byUnit: [String: [Int]] = [:]
        for (offset, item) in rows.enumerated() { byUnit[item.row.unit, default: []].append(offset) }
        let outcomes = try await withThrowingTaskGroup(of: [(Int, ImportOutcome)].self) { group in
            for offsets in byUnit.values {
                group.addTask {
                    var done: [(Int, ImportOutcome)] = []
                    for offset in offsets {
                        let row = rows[offset].row
                        done.append((offset, dryRun ? try await store.wouldImport(row) : try await store.importPurchase(row, importID: digest, now: now)))
                    }
                    return done
                }
            }
            var outcomes = [ImportOutcome?](repeating: nil, count: rows.count)
            for try await done in group { for (offset, outcome) in done { outcomes[offset] = outcome } }
            return outcomes
        }
        for (item, outcome) in zip(rows, outcomes) {
            switch outcome {
            case .imported?: report.imported += 1
            case .seen?: report.seen += 1
            case .conflict(let holder)?:
                report.conflicts += 1
                let whose = holder.isEmpty ? "claimed by a ticket not yet granted" : "user \(holder)'s"
                note("line \(item.line): conflict: \(item.row.unit) of \(item.row.userID) is \(whose): left", &report, problem)
            case nil: break
            }
        }
    }

    private func note(_ text: String, _ report: inout Report, _ problem: (String) -> Void) {
        problem(text)
        if report.problems.count < 10_000 { report.problems.append(text) }
    }

    /// The line an earlier, stopped run of this file got to, with its counts; 0: none.
    func resume(_ place: String, into report: inout Report) async throws -> Int {
        let saved = try await store.redis.send("HGETALL", place).checked().stringDictionary
        guard let line = saved["line"].flatMap({ Int($0) }) else { return 0 }
        report.resumedAfter = line
        report.read = saved["read"].flatMap { Int($0) } ?? 0
        report.imported = saved["imported"].flatMap { Int($0) } ?? 0
        report.seen = saved["seen"].flatMap { Int($0) } ?? 0
        report.conflicts = saved["conflicts"].flatMap { Int($0) } ?? 0
        report.invalid = saved["invalid"].flatMap { Int($0) } ?? 0
        return line
    }

    func save(_ place: String, line: Int, _ report: Report) async throws {
        guard !dryRun else { return }
        _ = try await store.redis.send(
            "HSET", place, "line", String(line), "read", String(report.read), "imported", String(report.imported),
            "seen", String(report.seen), "conflicts", String(report.conflicts), "invalid", String(report.invalid)
        ).checked()
    }

    /// Waits so that `rows` take at least `rows / rate` seconds since `started`.
    func pace(_ started: inout ContinuousClock.Instant, rows: Int, clock: ContinuousClock) async throws {
        let due = started + .milliseconds(rows * 1000 / max(rate, 1))
        if clock.now < due { try await Task.sleep(until: due, clock: clock) }
        started = clock.now
    }
}

extension PipelineStore {
    /// `import_purchase`: one row into the books.
    package func importPurchase(_ row: ImportRow, importID: String, now: Int64 = currentTimeMs()) async throws -> ImportOutcome {
        try await run(ImportPurchase(keys, row: row, importID: importID, now: now))
    }

    /// What `import_purchase` would do with the row, read and not written.
    package func wouldImport(_ row: ImportRow) async throws -> ImportOutcome {
        let original = row.originalTransactionID
        let replies = try await redis.pipeline([
            RedisCommand("GET", keys.claim(unit: row.unit, originalTransactionID: original)),
            RedisCommand("HGET", keys.grant(unit: row.unit, originalTransactionID: original), "user_id"),
            RedisCommand("GET", keys.owner(originalTransactionID: original)),
        ])
        let (claim, holder, owner) = (replies[0].string, replies[1].string, replies[2].string)
        if row.kind == .autoRenewable {
            guard let owner else { return .imported }
            return owner == row.userID ? .seen : .conflict(holder: owner)
        }
        if claim == nil, row.kind == .nonConsumable, let owner, owner != row.userID { return .conflict(holder: owner) }
        guard claim != nil else { return .imported }
        return holder == row.userID ? .seen : .conflict(holder: holder ?? "")
    }
}

extension SupportLookup {
    /// Get Transaction History of a whole customer, with each app's own key.
    package var customerHistory: EachApp<ServerAPICustomerHistory> {
        EachApp(clients.map { ($0.configuration.bundleID, ServerAPICustomerHistory(client: $0, signedData: signedData)) })
    }
}
