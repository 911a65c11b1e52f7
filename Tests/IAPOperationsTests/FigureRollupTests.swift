import IAPOperations
import PipelineCore
import RedisClient
import TestSupport
import Testing

@testable import IAPOperations

/// A report over whole months that are over reads each month's rollup, made once from its days
/// by the first report that needs it; a month not over (or cut by the range) is read by day.
@Suite struct FigureRollupTests {
    static func day(_ text: String) -> FigureDay { FigureDay(text)! }

    @Test func onlyWholeMonthsOverTwoDaysAgoAreRolledUp() {
        let range = (Self.day("2026-09-15").number...Self.day("2026-11-29").number).map(FigureDay.init(number:))
        let months = FigureRollup.split(range, today: Self.day("2026-11-29")).months
        #expect(months.map { $0.first!.description + "…" + $0.last!.description } == ["2026-10-01…2026-10-31"])
        // October ended yesterday: not yet (a worker's clock may still write its last day).
        #expect(FigureRollup.split(range, today: Self.day("2026-11-01")).months.isEmpty)
        #expect(FigureRollup.split(range, today: Self.day("2026-11-02")).months.count == 1)
        // November to date: its 1st to the 27th (two days before the 29th); the rest by day.
        let (_, toDate, rest) = FigureRollup.split(range, today: Self.day("2026-11-29"))
        #expect(toDate.map { $0.first!.description + "…" + $0.last!.description } == ["2026-11-01…2026-11-27"])
        #expect(rest.first?.description == "2026-09-15" && rest.suffix(2).map(\.description) == ["2026-11-28", "2026-11-29"])
        #expect(rest.count == 16 + 2)
    }

    @Test func aMonthToDatesRollupGivesTheSameReportsAndLastsThreeDays() async throws {
        try await withRedis { redis, _ in
            let keys = RedisKeys()
            let store = PipelineStore(redis: redis, keys: keys)
            for number in Self.day("2026-11-01").number...Self.day("2026-11-29").number {
                let cell = "|Production|USA|USD|gold.100"
                _ = try await redis.send("HSET", keys.figures(day: FigureDay(number: number)), "purchases" + cell, "3", "gross" + cell, "2970")
            }
            let days = (Self.day("2026-11-01").number...Self.day("2026-11-29").number).map(FigureDay.init(number:))
            let now = Self.day("2026-11-29").number * 86_400_000 + 3_600_000
            let raw = try await store.figures(of: days)
            let read = try await store.reportFigures(of: days, now: now)
            for by in ReportQuery.Grouping.allCases {
                let query = ReportQuery(report: .revenue, from: days[0], to: days.last!, by: by)
                #expect(BusinessReport(query, figures: read.figures(by: by)) == BusinessReport(query, figures: raw), "\(by)")
            }
            let rollup = keys.inBucket(0).figures(month: "2026-11:27")
            #expect(try await redis.send("HGET", rollup, "_complete").string == "1")
            let ttl = try await redis.send("TTL", rollup).int ?? -1
            #expect(ttl > 0 && ttl <= 3 * 86_400)
            // The next report reads it, not the days (a change to a day it covers is not seen; today's is).
            _ = try await redis.send("HINCRBY", keys.figures(day: Self.day("2026-11-03")), "purchases|Production|USA|USD|gold.100", "100")
            _ = try await redis.send("HINCRBY", keys.figures(day: Self.day("2026-11-29")), "purchases|Production|USA|USD|gold.100", "1")
            let again = BusinessReport(
                ReportQuery(report: .revenue, from: days[0], to: days.last!, by: .product), figures: try await store.reportFigures(of: days, now: now).byCell)
            let purchases: Int64 = again.totals.first.map { $0["purchases"] } ?? -1
            #expect(purchases == 29 * 3 + 1, "\(again.totals)")
        }
    }

    @Test func aMonthsRollupGivesTheSameReportsAsItsDaysAndIsMadeOnce() async throws {
        try await withRedis { redis, _ in
            let keys = RedisKeys()
            let store = PipelineStore(redis: redis, keys: keys)
            // October: two products in two storefronts, every day; a refund on the 31st; one November day.
            for number in Self.day("2026-10-01").number...Self.day("2026-10-31").number {
                let key = keys.figures(day: FigureDay(number: number))
                for (storefront, currency) in [("USA", "USD"), ("DEU", "EUR")] {
                    for product in ["gold.100", "vip|monthly"] {
                        let cell = "|Production|\(storefront)|\(currency)|\(product)"
                        _ = try await redis.send("HSET", key, "purchases" + cell, "2", "gross" + cell, "1990")
                    }
                }
            }
            _ = try await redis.send("HSET", keys.figures(day: Self.day("2026-10-31")), "refunds_gross|Production|USA|USD|gold.100", "995")
            _ = try await redis.send("HSET", keys.figures(day: Self.day("2026-11-03")), "purchases|Production|USA|USD|gold.100", "1")
            let now = Int64(Self.day("2026-11-10").number) * 86_400_000
            let days = (Self.day("2026-10-01").number...Self.day("2026-11-05").number).map(FigureDay.init(number:))
            let raw = try await store.figures(of: days)
            func reports(_ read: FigureRollup.Read) -> [BusinessReport] {
                ReportQuery.Grouping.allCases.map { by in
                    BusinessReport(ReportQuery(report: .revenue, from: days[0], to: days.last!, by: by), figures: read.figures(by: by))
                }
            }
            let first = try await store.reportFigures(of: days, now: now)
            #expect(reports(first) == reports(.init(byDay: raw, byCell: raw)))
            let rollup = keys.inBucket(0).figures(month: "2026-10")
            #expect(try await redis.send("HGET", rollup, "_complete").string == "1")
            // Read from the rollup now: October's days are not read again (a change there is not seen).
            _ = try await redis.send("HINCRBY", keys.figures(day: Self.day("2026-10-05")), "purchases|Production|USA|USD|gold.100", "100")
            let second = try await store.reportFigures(of: days, now: now)
            #expect(reports(second) == reports(first))
            #expect(second.byCell.count < raw.count && second.byDay.count < raw.count)
            let byDay = BusinessReport(ReportQuery(report: .revenue, from: days[0], to: days.last!, by: .day), figures: second.byDay)
            #expect(byDay.rows.first { $0.key == "2026-10-31" && $0.currency == "USD" }?["refunds_milliunits"] == 995)
            #expect(byDay.rows.count == 31 * 2 + 1)
        }
    }
}
