import Foundation

/// A point in time as `iapctl apple notifications backfill` takes it: an ISO-8601 date-time
/// (`2026-11-01T00:00:00Z`, fractions and offsets allowed), a date (`2026-11-01`, midnight UTC), or
/// a duration back from now (`90s`, `45m`, `72h`, `7d`).
package enum HistoryTime {
    /// UNIX ms, or `nil` when `text` is none of the three.
    package static func parse(_ text: String, now: Int64) -> Int64? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let unit = text.last, let amount = Int64(text.dropLast()), amount >= 0 {
            let seconds: Int64? = switch unit {
            case "s": 1
            case "m": 60
            case "h": 3600
            case "d": 86400
            default: nil
            }
            if let seconds, amount <= 3650 * 86400 / seconds { return now - amount * seconds * 1000 }
        }
        let withFraction = ISO8601DateFormatter()
        withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plain = ISO8601DateFormatter()
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        for formatter in [plain, withFraction, day] {
            if let date = formatter.date(from: text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        }
        return nil
    }
}
