import Foundation
import IAPSettings
import PipelineCore
import PlainJSON

/// `IAP_WEBHOOKS_FILE`: the webhook destinations, keyed by name, each with its URL, its secret
/// (or a file holding it) and, optionally, filters and a share of the worker's slots.
///
/// ```json
/// {"game":      {"url": "https://game.example/iap", "secret_file": "/run/secrets/game-hook",
///                "environments": ["Production"]},
///  "analytics": {"url": "https://collector.example/apple", "secret": "…",
///                "events": ["granted", "renewed", "revoked", "expired"], "max_in_flight": 4}}
/// ```
package enum WebhooksFile {
    static let variable = "IAP_WEBHOOKS_FILE"
    static let members: Set<String> = [
        "url", "secret", "secret_file", "previous_secret", "previous_secret_file", "apps", "environments", "events", "max_in_flight",
    ]

    /// Reads and checks the file; every problem is one `ConfigurationError` naming the destination and member.
    package static func destinations(file path: String, source: SettingSource) throws(ConfigurationError) -> [WebhookDestination] {
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError(variable, "cannot read \(path)") }
        return try destinations(text: String(decoding: data, as: UTF8.self), source: source)
    }

    package static func destinations(text: String, source: SettingSource) throws(ConfigurationError) -> [WebhookDestination] {
        func fail(_ problem: String) -> ConfigurationError { ConfigurationError(variable, problem) }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(text.utf8))
        } catch {
            throw fail("not JSON: \(error)")
        }
        guard let named = json.object else { throw fail("is not a JSON object keyed by destination name") }
        guard !named.isEmpty else { throw fail("names no destination") }
        var destinations: [WebhookDestination] = []
        for (name, value) in named.sorted(by: { $0.key < $1.key }) {
            guard WebhookDestination.isName(name) else {
                throw fail("\"\(name.prefix(40))\" is not a destination name (1 to 32 of a-z, 0-9, _ and -)")
            }
            do {
                destinations.append(try destination(name, value, source: source))
            } catch {
                throw fail("\(name): \(error.problem)")
            }
        }
        return destinations
    }

    private static func destination(_ name: String, _ value: JSONValue, source: SettingSource) throws(ConfigurationError) -> WebhookDestination {
        func fail(_ problem: String) -> ConfigurationError { ConfigurationError(variable, problem) }
        guard let fields = value.object else { throw fail("is not an object") }
        if let unknown = fields.keys.sorted().first(where: { !members.contains($0) }) {
            throw fail("unknown member \"\(unknown)\" (known: \(members.sorted().joined(separator: ", ")))")
        }
        do {
            guard let text = try value.stringIfPresent("url") else { throw fail("url is required") }
            let url = try source.httpURL(text, variable: variable, shown: Setting.maskingPassword(in: text))
            guard let secret = try secret(value, "secret") else { throw fail("secret or secret_file is required (at least 16 bytes)") }
            var destination = WebhookDestination(
                name: name, url: url, secret: secret, previousSecret: try self.secret(value, "previous_secret"),
                filter: try filter(value))
            if let share = try value.intIfPresent("max_in_flight") {
                guard share >= 1 else { throw fail("max_in_flight must be at least 1") }
                destination.maxInFlight = share
            }
            return destination
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw fail("\(error)")
        }
    }

    /// `member` written in the file, or read from `<member>_file` (a trailing newline dropped);
    /// at least 16 bytes, never shown.
    private static func secret(_ value: JSONValue, _ member: String) throws -> String? {
        let inline = try value.stringIfPresent(member)
        let file = try value.stringIfPresent(member + "_file")
        if inline != nil && file != nil { throw ConfigurationError(variable, "\(member) and \(member)_file: give one") }
        var secret = inline
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw ConfigurationError(variable, "cannot read \(member)_file \(file)") }
            secret = String(decoding: data, as: UTF8.self)
            while secret?.last == "\n" || secret?.last == "\r" { secret?.removeLast() }
        }
        if let secret, secret.utf8.count < 16 { throw ConfigurationError(variable, "\(member) must be at least 16 bytes") }
        return secret
    }

    private static func filter(_ value: JSONValue) throws -> WebhookFilter {
        func list(_ member: String) throws -> [String]? {
            guard let items = try value.arrayIfPresent(member) else { return nil }
            let strings = items.compactMap(\.string)
            guard strings.count == items.count, !strings.isEmpty else {
                throw ConfigurationError(variable, "\(member) must be a non-empty list of strings")
            }
            return strings
        }
        let filter = WebhookFilter(apps: try list("apps"), environments: try list("environments"), events: try list("events"))
        if let unknown = filter.environments?.first(where: { !WebhookFilter.knownEnvironments.contains($0) }) {
            throw ConfigurationError(variable, "environments: \"\(unknown.prefix(40))\" is not Production or Sandbox")
        }
        if let unknown = filter.events?.first(where: { !WebhookFilter.knownEvents.contains($0) }) {
            throw ConfigurationError(
                variable, "events: \"\(unknown.prefix(40))\" is no event (known: \(WebhookFilter.knownEvents.sorted().joined(separator: ", ")))")
        }
        return filter
    }
}
