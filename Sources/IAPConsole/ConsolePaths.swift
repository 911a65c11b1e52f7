import Foundation

/// Every link the console writes: built here from ids, percent-encoded as one path segment or
/// query value, and always a path of the console (never a URL taken from data).
enum ConsolePaths {
    static func user(_ id: String, before: String? = nil) -> String {
        "/users/" + segment(id) + (before.map { "?before=" + segment($0) } ?? "")
    }

    static func ticket(_ id: String) -> String { "/tickets/" + segment(id) }

    static func dead(bucket: Int, start: Int) -> String { "/dead?bucket=\(bucket)&start=\(start)" }

    /// Where a held purchase's release or rejection is posted.
    static func held(_ unit: String, _ decision: HoldDecision) -> String { "/held/" + segment(unit) + "/" + decision.rawValue }

    /// A form field of a query as a browser writes it (`application/x-www-form-urlencoded`: `+`
    /// is a space, `%2B` a plus), which `URI.queryParameters` does not read so.
    static func formValue(_ name: String, in query: String?) -> String? {
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.first == Substring(name) else { continue }
            return String(parts.count > 1 ? parts[1] : "").replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }

    static func segment(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
