import Foundation
import IAPStages
import PipelineCore

/// `iapctl export transactions`: every purchase granted in a range of UTC days, read from the
/// grant records (every bucket's `grant:*`, a `SCAN` page at a time; never the stream, which keeps
/// 30 days), as NDJSON or CSV for a warehouse. Resumable: where it got to (the bucket and its
/// `SCAN` cursor) is kept in a progress file after every page, and a run with `--resume` goes on
/// from there. `SCAN` may return a record twice (when Redis grows its table meanwhile): `unit` is
/// unique, dedupe on it.
package struct TransactionExport: Sendable {
    /// The columns, in order (docs/reports.md says what each is).
    package static let columns = [
        "unit", "transaction_id", "original_transaction_id", "user_id", "product_id", "quantity", "environment", "source",
        "granted_at", "purchase_date", "price_milliunits", "currency", "storefront", "in_app_ownership_type", "offer_type",
        "offer_identifier", "offer_discount_type", "app_transaction_id", "adopted", "revoked_at", "revoked_quantity",
        "revocation_type", "revocation_percentage", "revocation_reason", "reinstated_at", "billing_plan_type",
        "commitment_period", "commitment_periods", "commitment_expires_at", "commitment_price",
    ]
    /// The grant record's field of each column (the same name but for the price).
    static let fields = columns.map { $0 == "price_milliunits" ? "price" : $0 }
    /// Columns that are times in ms on the record, written as ISO 8601 (UTC).
    static let times: Set<String> = ["granted_at", "purchase_date", "revoked_at", "reinstated_at", "commitment_expires_at"]

    package enum Format: String, Sendable, CaseIterable { case ndjson, csv }

    /// Where a run got to: the bucket it reads and the `SCAN` cursor of its next page.
    package struct Progress: Sendable, Equatable, Codable {
        package var bucket: Int
        package var cursor: String
        package var written: Int

        package init(bucket: Int = 0, cursor: String = "0", written: Int = 0) {
            self.bucket = bucket
            self.cursor = cursor
            self.written = written
        }
    }

    package let store: PipelineStore
    /// Granted at or after (ms) and before (ms).
    package let since: Int64
    package let until: Int64
    package let format: Format

    package init(store: PipelineStore, since: FigureDay, until: FigureDay, format: Format) {
        self.store = store
        self.since = since.number * 86_400_000
        self.until = (until.number + 1) * 86_400_000
        self.format = format
    }

    /// The header line (CSV), or nothing (NDJSON).
    package var header: String? { format == .csv ? Self.columns.joined(separator: ",") : nil }

    /// Reads pages from `progress` on, handing each page's lines to `write` and then the progress
    /// after it (to keep), until every bucket is read or `maxRecords` were written; returns the
    /// progress, `nil` once every bucket is read.
    package func run(
        from progress: Progress, maxRecords: Int? = nil, write: ([String], Progress?) throws -> Void
    ) async throws -> Progress? {
        var at = progress
        let buckets = store.keys.everyBucket
        while at.bucket < buckets.count {
            let (next, records) = try await store.grantRecords(in: buckets[at.bucket], after: at.cursor, fields: Self.fields)
            let lines = records.compactMap(line(of:))
            at = next == "0" ? Progress(bucket: at.bucket + 1, cursor: "0", written: at.written) : Progress(bucket: at.bucket, cursor: next, written: at.written)
            at.written += lines.count
            let done = at.bucket >= buckets.count
            try write(lines, done ? nil : at)
            if !done, let maxRecords, at.written >= maxRecords { return at }
        }
        return nil
    }

    /// A record's line when it was granted in the range; `nil` otherwise.
    func line(of values: [String?]) -> String? {
        guard values.count == Self.fields.count, let granted = values[Self.fields.firstIndex(of: "granted_at")!].flatMap({ Int64($0) }),
            granted >= since, granted < until
        else { return nil }
        let cells = zip(Self.columns, values).map { column, value in
            Self.times.contains(column) ? value.flatMap { Int64($0) }.map(Self.iso8601) ?? value : value
        }
        switch format {
        case .csv:
            return cells.map { Self.csvField($0 ?? "") }.joined(separator: ",")
        case .ndjson:
            var members: [String: Any] = [:]
            for (column, cell) in zip(Self.columns, cells) { if let cell { members[column] = cell } }
            let data = (try? JSONSerialization.data(withJSONObject: members, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func iso8601(_ ms: Int64) -> String {
        Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
