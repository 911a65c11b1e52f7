/// A UTC day, `YYYY-MM-DD`: the day whose figures a step counts (the day of its `now`), and what a
/// report's `from` and `to` name. Days are counted from 1970-01-01 (day 0), so a range is a loop
/// over integers; the text is made by hand (Howard Hinnant's civil-from-days), with no formatter
/// on the grant step's path.
package struct FigureDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01.
    package let number: Int64

    package init(number: Int64) { self.number = number }

    /// The day of a time in milliseconds since 1970 (UTC).
    package init(milliseconds: Int64) {
        let perDay: Int64 = 86_400_000
        number = milliseconds >= 0 ? milliseconds / perDay : (milliseconds - perDay + 1) / perDay
    }

    /// A day as `YYYY-MM-DD` (a real date, years 1970–9999); `nil` for anything else.
    package init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), year >= 1970,
            (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year)
        else { return nil }
        self.number = Self.days(year: year, month: month, day: day)
    }

    /// The day `count` days after this one.
    package func advanced(by count: Int64) -> FigureDay { FigureDay(number: number + count) }

    /// Written digit by digit into the string's own storage (the grant step names its day's key
    /// at every grant: string padding and joining cost ten times as much).
    package var description: String {
        let (year, month, day) = Self.civil(number)
        guard (0...9999).contains(year) else { return Self.padded(year, 4) + "-" + Self.padded(month, 2) + "-" + Self.padded(day, 2) }
        return String(unsafeUninitializedCapacity: 10) { text in
            func put(_ value: Int64, at end: Int, width: Int) {
                var rest = value
                for offset in stride(from: end, to: end - width, by: -1) {
                    text[offset] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
            }
            put(year, at: 3, width: 4)
            text[4] = UInt8(ascii: "-")
            put(month, at: 6, width: 2)
            text[7] = UInt8(ascii: "-")
            put(day, at: 9, width: 2)
            return 10
        }
    }

    package static func < (lhs: FigureDay, rhs: FigureDay) -> Bool { lhs.number < rhs.number }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a date (days_from_civil).
    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day since 1970-01-01 (civil_from_days), for days from 1970 on.
    private static func civil(_ number: Int64) -> (Int64, Int64, Int64) {
        let z = number + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
