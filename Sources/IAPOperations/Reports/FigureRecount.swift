import IAPStages
import PipelineCore
import PlainJSON

/// A day's figures rebuilt from the grant records (`iapctl report recount --day D`, and the drill
/// after every trial), set beside the live ones that `count_figures.lua` counted with the events.
///
/// What the records say exactly is recounted: the sales (`purchases`, `units`, `gross`,
/// `unpriced`, `family_shared`, `adopted`: a record granted that day whose source is neither an
/// operator nor an import) and the refunds in whole (`refunds`, `refunded_units`, `refunds_gross`,
/// `refunds_unpriced`: a record Apple revoked that day, not an operator). A record keeps only its latest refund, so a
/// cell (environment, storefront, currency, product) with a refund in part or a reversed refund
/// has its refund figures left out (`unsure`); subscriptions' lives, reinstatements, requests and
/// declines have no record of their own and are not recounted. And the live count of subscribers
/// now (`subscribers`: `active`, `trials`, `mrr`) is rebuilt from the subscription records.
package struct FigureRecount: Sendable, Equatable {
    /// The figures recounted, each with the live value and the records' value.
    package struct Difference: Sendable, Equatable {
        package var field: String
        package var live: Int64
        package var records: Int64

        package init(field: String, live: Int64, records: Int64) {
            self.field = field
            self.live = live
            self.records = records
        }
    }

    package var day: FigureDay
    /// Grant records read.
    package var recordsRead: Int
    /// Subscription records read (the subscribers now).
    package var subscriptionsRead: Int = 0
    /// Subscription records counted anew (`--repair`): written before the live count existed.
    package var subscriptionsRepaired: Int = 0
    /// Figures compared (fields with a value on either side).
    package var compared: Int
    package var differences: [Difference]
    /// Cells whose refund figures were not compared: a refund in part or reversed there.
    package var unsure: [String]

    package static let salesFigures: Set<String> = ["purchases", "units", "gross", "unpriced", "family_shared", "adopted"]
    package static let refundFigures: Set<String> = ["refunds", "refunded_units", "refunds_gross", "refunds_unpriced"]

    /// The grant record's fields the recount reads, in order.
    static let fields = [
        "granted_at", "source", "environment", "storefront", "currency", "product_id", "price", "quantity", "in_app_ownership_type",
        "adopted", "transferred_from", "revoked_at", "revoked_quantity", "revocation_type", "revocation_percentage", "revocation_reason",
        "partially_revoked_at", "reinstated_at",
    ]

    /// The subscription record's fields the subscribers' count reads, in order.
    static let subscriptionFields = ["status", "environment", "period_storefront", "period_currency", "period_mrr", "period_offer", "product_id"]

    /// What one subscription record counts in now: the same rule as `count_subscriber.lua`'s.
    static func subscriber(of values: [String?], into counted: inout [String: Int64]) {
        guard values.count == subscriptionFields.count, values[0] == "active" || values[0] == "grace_period" else { return }
        let cell = [values[1], values[2], values[3], values[6]].map { $0 ?? "" }.joined(separator: "|")
        counted["active|" + cell, default: 0] += 1
        if values[5] == "FREE_TRIAL" { counted["trials|" + cell, default: 0] += 1 }
        if let mrr = values[4].flatMap({ Int64($0) }), mrr != 0 { counted["mrr|" + cell, default: 0] += mrr }
    }

    /// The figures one grant record adds to `day`: the same rules as `count_figures.lua`'s, read
    /// from the record; and the cell it makes unsure, if any.
    static func figures(of values: [String?], day: FigureDay, into counted: inout [String: Int64], unsure: inout Set<String>) {
        var record: [String: String] = [:]
        for (name, value) in zip(fields, values) { record[name] = value }
        let cell = [record["environment"], record["storefront"], record["currency"], record["product_id"]].map { $0 ?? "" }
            .joined(separator: "|")
        func add(_ name: String, _ by: Int64) { if by != 0 { counted[name + "|" + cell, default: 0] += by } }
        func onDay(_ name: String) -> Bool { record[name].flatMap { Int64($0) }.map { FigureDay(milliseconds: $0) == day } ?? false }
        let price = record["price"].flatMap { Int64($0) }
        let quantity = record["quantity"].flatMap { Int64($0) } ?? 1
        let source = record["source"] ?? ""
        if onDay("granted_at"), source != "operator", source != "import" {
            if record["adopted"] == "1" {
                add("adopted", 1)
            } else if record["in_app_ownership_type"] == "FAMILY_SHARED" {
                add("family_shared", 1)
            } else {
                add("purchases", 1)
                add("units", quantity)
                if let price { add("gross", price * quantity) } else { add("unpriced", 1) }
            }
        }
        if record["partially_revoked_at"] != nil || record["reinstated_at"] != nil {
            unsure.insert(cell)
        } else if onDay("revoked_at"), record["revocation_type"] != "FAMILY_REVOKE", record["revocation_reason"] != "operator" {
            let taken = record["revoked_quantity"].flatMap { Int64($0) } ?? quantity
            add("refunds", 1)
            add("refunded_units", taken)
            if let price {
                let share = record["revocation_percentage"].flatMap { Int64($0) }
                if record["revocation_type"] == "REFUND_PRORATED", let share, quantity == 1 {
                    add("refunds_gross", price * share / 100_000)
                } else {
                    add("refunds_gross", price * taken)
                }
            } else {
                add("refunds_unpriced", 1)
            }
        }
    }
}

extension PipelineStore {
    /// Every grant record of every bucket read (`SCAN`, then `HMGET` in pipelines), the day's
    /// figures rebuilt from them and compared with the live ones.
    package func recountFigures(day: FigureDay, repairSubscribers: Bool = false) async throws -> FigureRecount {
        var counted: [String: Int64] = [:]
        var unsure: Set<String> = []
        var read = 0
        for bucket in keys.everyBucket {
            var cursor = "0"
            repeat {
                let page = try await grantRecords(in: bucket, after: cursor, fields: FigureRecount.fields, count: 1000)
                cursor = page.next
                read += page.records.count
                for values in page.records { FigureRecount.figures(of: values, day: day, into: &counted, unsure: &unsure) }
            } while cursor != "0"
        }
        var live: [String: Int64] = [:]
        for figure in try await figures(of: [day]) where FigureRecount.salesFigures.contains(figure.name) || FigureRecount.refundFigures.contains(figure.name) {
            live[figure.field] = figure.value
        }
        let (subscriptions, repaired) = try await countSubscribers(into: &counted, repair: repairSubscribers)
        for cell in try await subscriberCells() { live[cell.field] = cell.value }
        var differences: [FigureRecount.Difference] = []
        var compared = 0
        for field in Set(live.keys).union(counted.keys).sorted() {
            let name = String(field.prefix { $0 != "|" })
            let cell = String(field.dropFirst(name.count + 1))
            if FigureRecount.refundFigures.contains(name), unsure.contains(cell) { continue }
            compared += 1
            let (a, b) = (live[field] ?? 0, counted[field] ?? 0)
            if a != b { differences.append(.init(field: field, live: a, records: b)) }
        }
        var recount = FigureRecount(day: day, recordsRead: read, compared: compared, differences: differences, unsure: unsure.sorted())
        recount.subscriptionsRead = subscriptions
        recount.subscriptionsRepaired = repaired
        return recount
    }

    /// Every subscription record of every bucket read, what each counts in now added to
    /// `counted`; with `repair`, each record that counts in something is counted in its bucket's
    /// live count first (`count_subscription`: a record counted already changes nothing).
    private func countSubscribers(into counted: inout [String: Int64], repair: Bool) async throws -> (read: Int, repaired: Int) {
        var read = 0, repaired = 0
        for bucket in keys.everyBucket {
            var cursor = "0"
            repeat {
                let page = try await records(of: .subscription, in: bucket, after: cursor, fields: FigureRecount.subscriptionFields, count: 1000)
                cursor = page.next
                read += page.records.count
                for record in page.records {
                    FigureRecount.subscriber(of: record.values, into: &counted)
                    if repair, try await run(CountSubscription(record: record.name, in: bucket)) { repaired += 1 }
                }
            } while cursor != "0"
        }
        return (read, repaired)
    }
}

extension FigureRecount {
    /// As `iapctl report recount --json` prints it.
    package var json: JSONValue {
        .object([
            "day": .string(day.description), "records_read": .number(String(recordsRead)), "compared": .number(String(compared)),
            "subscriptions_read": .number(String(subscriptionsRead)), "subscriptions_repaired": .number(String(subscriptionsRepaired)),
            "differences": .array(differences.map {
                .object(["field": .string($0.field), "live": .number(String($0.live)), "records": .number(String($0.records))])
            }),
            "unsure": .array(unsure.map(JSONValue.string)),
        ])
    }
}
