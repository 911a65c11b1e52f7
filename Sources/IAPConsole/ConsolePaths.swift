import Foundation

/// Every link the console writes: built here from ids, percent-encoded as one path segment or
/// query value, and always a path of the console (never a URL taken from data).
enum ConsolePaths {
    /// A user's page: `before`, the purchases bought before (ms); `eventsBefore`, the events
    /// written before (an entry id).
    static func user(_ id: String, before: String? = nil, eventsBefore: String? = nil) -> String {
        let query = [before.map { "before=" + segment($0) }, eventsBefore.map { "events_before=" + segment($0) }].compactMap { $0 }
        return "/users/" + segment(id) + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    static func ticket(_ id: String) -> String { "/tickets/" + segment(id) }

    /// Where support gives a user a grant for a time, and takes one back.
    static func grants(user: String) -> String { "/users/" + segment(user) + "/grants" }
    static func endGrant(user: String, grant: String) -> String { grants(user: user) + "/" + segment(grant) + "/end" }

    /// The Business page over the last `days` of an environment.
    static func business(days: Int, environment: String) -> String { "/business?days=\(days)&environment=" + segment(environment) }

    /// A look-up at Apple (support and above).
    static func lookup(_ kind: ConsolePages.LookupKind, _ id: String) -> String { "/lookup?kind=\(kind.rawValue)&id=" + segment(id) }

    /// Where support's grant of a purchase found at Apple is posted.
    static let lookupGrant = "/lookup/grant"

    /// A purchase's story, by its grant unit or original transaction id.
    static func purchase(_ id: String) -> String { "/purchases/" + segment(id) }

    static func dead(bucket: Int, start: Int) -> String { "/dead?bucket=\(bucket)&start=\(start)" }

    /// The dry run of a group's replay or purge, within one window.
    static func deadPreview(bucket: Int, start: Int, group: DeadLetterGroup) -> String {
        "/dead/preview?bucket=\(bucket)&start=\(start)&stage=" + segment(group.stage) + "&reason=" + segment(group.reason)
    }

    /// Where a previewed group's replay or purge is posted.
    static func dead(_ action: DeadLetterAction) -> String { "/dead/" + action.rawValue }

    /// The held purchases after the one held at `at` with `unit` (the next page).
    static func held(after at: Int64, unit: String) -> String { "/held?after=\(at)&unit=" + segment(unit) }

    /// Where a held purchase's release or rejection is posted.
    static func held(_ unit: String, _ decision: HoldDecision) -> String { "/held/" + segment(unit) + "/" + decision.rawValue }

    /// A form field of a query as a browser writes it (`application/x-www-form-urlencoded`: `+`
    /// is a space, `%2B` a plus), which `URI.queryParameters` does not read so.
    static func formValue(_ name: String, in query: String?) -> String? {
        formValues(name, in: query).first
    }

    /// Every value of a field given more than once (`entry=a&entry=b`), in order.
    static func formValues(_ name: String, in query: String?) -> [String] {
        (query ?? "").split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.first == Substring(name) else { return nil }
            return String(parts.count > 1 ? parts[1] : "").replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
    }

    /// An argument as a POSIX shell reads it back: single-quoted unless it is plainly safe.
    static func shellQuoted(_ argument: String) -> String {
        let plain = !argument.isEmpty && argument.unicodeScalars.allSatisfy { CharacterSet(charactersIn: "-._:/=@%+,").contains($0) || unreserved.contains($0) }
        return plain ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    static func segment(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
