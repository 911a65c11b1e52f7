import Configuration
import Foundation

/// Where settings are read: the flags given, over the environment. The two are swift-configuration
/// providers (an in-memory one over `EnvironmentVariablesProvider`), secrets marked as such; each
/// value is then parsed and range-checked against its `Setting`, and a bad one is a
/// `ConfigurationError` naming the variable. An empty value counts as unset.
public struct SettingSource: Sendable {
    private let reader: ConfigReader

    /// Nothing given: every setting at its default (a test checks each default parses).
    public static let defaults = SettingSource(environment: [:])

    public init(environment: [String: String], flags: [String: String] = [:]) {
        let secrets = Set(Settings.all.filter(\.isSecret).map(\.variable))
        let given = flags.filter { !$0.value.isEmpty }
        reader = ConfigReader(providers: [
            InMemoryProvider(
                name: "flags",
                values: Dictionary(uniqueKeysWithValues: given.map { name, value in
                    (AbsoluteConfigKey([name]), ConfigValue(.string(value), isSecret: secrets.contains(name)))
                })),
            EnvironmentVariablesProvider(
                environmentVariables: environment.filter { $0.key.hasPrefix("IAP_") && !$0.value.isEmpty },
                secretsSpecifier: .specific(secrets)),
        ])
    }

    /// The value given for `setting`, blanks around it dropped; `nil` when unset.
    public func given(_ setting: Setting) -> String? {
        let text = reader.string(forKey: ConfigKey([setting.variable]), isSecret: setting.isSecret)?
            .trimmingCharacters(in: .whitespaces)
        return text?.isEmpty == false ? text : nil
    }

    /// The value given, else the default; `nil` when neither.
    public func text(_ setting: Setting) -> String? { given(setting) ?? setting.defaultValue }

    /// A whole number (`.count` or `.bytes`) within its range.
    public func count(_ setting: Setting) throws(ConfigurationError) -> Int {
        guard let value = try optionalCount(setting) else {
            preconditionFailure("\(setting) has no default: read it with optionalCount")
        }
        return value
    }

    public func optionalCount(_ setting: Setting) throws(ConfigurationError) -> Int? {
        guard let text = text(setting) else { return nil }
        let range: ClosedRange<Int>
        switch setting.kind {
        case .count(let allowed), .bytes(let allowed): range = allowed
        default: preconditionFailure("\(setting) is not a number")
        }
        guard let number = Int(text) else { throw ConfigurationError(setting.variable, "'\(text)' is not a whole number") }
        guard range.contains(number) else {
            throw ConfigurationError(setting.variable, "\(number) is outside \(setting.kind.rangeText ?? "")")
        }
        return number
    }

    /// A time in the setting's unit: whole milliseconds, or seconds with decimals allowed (`0.5`).
    public func duration(_ setting: Setting) throws(ConfigurationError) -> Duration {
        guard case .duration(let unit, let range) = setting.kind, let text = text(setting) else {
            preconditionFailure("\(setting) is not a duration with a default")
        }
        let value: Duration
        switch unit {
        case .milliseconds:
            guard let number = Int64(text) else {
                throw ConfigurationError(setting.variable, "'\(text)' is not a whole number of milliseconds")
            }
            value = .milliseconds(number)
        case .seconds:
            guard let number = Double(text), number.isFinite, abs(number) < 1e12 else {
                throw ConfigurationError(setting.variable, "'\(text)' is not a number of seconds")
            }
            value = .milliseconds(Int64((number * 1000).rounded()))
        }
        guard range.contains(value) else {
            throw ConfigurationError(setting.variable, "\(text) is outside \(setting.kind.rangeText ?? "")")
        }
        return value
    }

    /// An `https` URL, or an `http` one to loopback or a host of `IAP_PLAIN_HTTP_HOSTS` (a
    /// simulator on a private network): a secret or a token is never sent in clear by mistake.
    /// `nil` when unset and without a default.
    public func url(_ setting: Setting) throws(ConfigurationError) -> String? {
        guard let text = text(setting) else { return nil }
        return try httpURL(text, variable: setting.variable, shown: setting.shown(text))
    }

    /// `text` when it is an http(s) URL that may be used: https, or plain http to loopback or to a
    /// host of `IAP_PLAIN_HTTP_HOSTS`; else an error of `variable` showing it as `shown`.
    public func httpURL(_ text: String, variable: String, shown: String) throws(ConfigurationError) -> String {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty
        else {
            throw ConfigurationError(variable, "'\(shown)' is not an http(s) URL")
        }
        if scheme == "http" && !LoopbackHost.contains(host) && !list(Settings.plainHTTPHosts).contains(host.lowercased()) {
            throw ConfigurationError(
                variable,
                "'\(shown)' is plain http to \(host): use https://, or name the host in \(Settings.plainHTTPHosts.variable) "
                    + "(a simulator on a private network; loopback needs no naming)")
        }
        return text
    }

    /// The comma-separated values, blanks dropped; empty when unset.
    public func list(_ setting: Setting) -> [String] {
        (text(setting) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Settings that mean something only together (a key's id and its file): each as given, or
    /// the first one missing named as required with `others` when some but not all are given.
    public func together(_ settings: [Setting], _ others: String) throws(ConfigurationError) -> [String?] {
        let values = settings.map(given)
        if values.contains(where: { $0 != nil }), let missing = settings.indices.first(where: { values[$0] == nil }) {
            throw ConfigurationError(settings[missing].variable, "required with \(others)")
        }
        return values
    }

    /// A secret as given, refused when shorter than `minBytes`.
    public func secret(_ setting: Setting, minBytes: Int) throws(ConfigurationError) -> String? {
        guard let value = given(setting) else { return nil }
        guard value.utf8.count >= minBytes else { throw ConfigurationError(setting.variable, "must be at least \(minBytes) bytes") }
        return value
    }

    /// One of the setting's words, lower-cased.
    public func choice(_ setting: Setting) throws(ConfigurationError) -> String {
        guard case .choice(let words) = setting.kind, let text = text(setting) else {
            preconditionFailure("\(setting) is not a choice with a default")
        }
        guard words.contains(text.lowercased()) else {
            throw ConfigurationError(setting.variable, "'\(text)' is not \(Setting.Kind.orList(words))")
        }
        return text.lowercased()
    }
}

extension Setting.Kind {
    /// The allowed range as the docs and errors write it, in the setting's unit; `nil` when any value goes.
    public var rangeText: String? {
        switch self {
        case .count(let range), .bytes(let range):
            return range.upperBound == .max ? "at least \(range.lowerBound)" : "\(range.lowerBound)...\(range.upperBound)"
        case .duration(let unit, let range):
            return "\(unit.format(range.lowerBound))...\(unit.format(range.upperBound)) \(unit.rawValue)"
        case .choice(let words):
            return Self.orList(words)
        case .text, .secret, .url, .redisURL, .file, .list:
            return nil
        }
    }

    static func orList(_ words: [String]) -> String {
        words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + words.last!
    }
}

extension Setting.DurationUnit {
    /// `duration` written in this unit: whole milliseconds, or seconds with decimals only when needed.
    public func format(_ duration: Duration) -> String {
        // Whole milliseconds, as RedisClient's `Duration.milliseconds` (not linked here).
        let ms = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        switch self {
        case .milliseconds: return String(ms)
        case .seconds: return ms % 1000 == 0 ? String(ms / 1000) : String(Double(ms) / 1000)
        }
    }
}

extension Setting {
    /// The default of a `.count` or `.bytes` setting, for code that runs without a configuration
    /// (`WorkerSettings()` in tests); it is the one written in `Settings`.
    public var defaultCount: Int { try! SettingSource.defaults.count(self) }

    /// The default of a `.duration` setting.
    public var defaultDuration: Duration { try! SettingSource.defaults.duration(self) }
}
