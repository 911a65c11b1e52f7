import Foundation

/// What redis-server does at most on this machine, measured by `redis-benchmark` against the
/// scenario's own server (same persistence): plain LPUSH and RPOP, 50 clients, no pipelining.
package struct RedisCeiling: Sendable, Codable {
    package var lpushPerSecond: Double
    package var rpopPerSecond: Double

    package var opsPerSecond: Double { (lpushPerSecond + rpopPerSecond) / 2 }

    /// Parses `redis-benchmark --csv` output: a header, then `"LPUSH","81234.56",…`.
    init(csv: String) throws {
        let rates = Self.rates(csv: csv)
        guard let lpush = rates["LPUSH"], let rpop = rates["RPOP"] else {
            throw BenchError("redis-benchmark printed no LPUSH/RPOP rates: \(csv.prefix(300))")
        }
        lpushPerSecond = lpush
        rpopPerSecond = rpop
    }

    /// Requests/s by test name (upper case) from `redis-benchmark --csv` output.
    static func rates(csv: String) -> [String: Double] {
        var rates: [String: Double] = [:]
        for line in csv.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            if fields.count >= 2, let rate = Double(fields[1]) { rates[fields[0].uppercased()] = rate }
        }
        return rates
    }
}
