import Foundation
import PipelineCore
import Testing

/// A figures key's day: the UTC day of a time, its text, and the text read back, as Foundation's
/// calendar says them.
@Suite struct FigureDayTests {
    @Test func aDayIsTheUTCDayOfItsTimeAndReadsBack() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        // Every day from 1970 to 2100 and back, a few hours into each.
        for number in stride(from: Int64(0), through: 47_847, by: 1) {
            let ms = number * 86_400_000 + 3 * 3_600_000
            let day = FigureDay(milliseconds: ms)
            let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(ms) / 1000))
            let text = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
            #expect(day.number == number && day.description == text, "\(number)")
            #expect(FigureDay(text) == day, "\(text)")
        }
        #expect(FigureDay(milliseconds: 86_399_999).description == "1970-01-01")
        #expect(FigureDay(milliseconds: 86_400_000).description == "1970-01-02")
    }

    @Test func onlyARealDayIsADay() {
        for text in ["2026-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "2026-1-01", "26-01-01", "2026/01/01", "1969-12-31",
                     "２026-01-01", "2026-01-0a", ""] {
            #expect(FigureDay(text) == nil, "\(text)")
        }
        #expect(FigureDay("2024-02-29")?.description == "2024-02-29")
        #expect(FigureDay("2000-02-29") != nil && FigureDay("2100-02-29") == nil)
        #expect(FigureDay("2026-11-29")?.advanced(by: 3).description == "2026-12-02")
    }
}
