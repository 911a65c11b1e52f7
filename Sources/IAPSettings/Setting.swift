/// One `IAP_*` setting, described once: its variable, what kind of value it takes (with its unit
/// and allowed range), its default, what it does and which commands read it. The flags, each
/// command's `--help`, the environment parse and `docs/configuration.md` all come from these
/// (`Settings.all`).
public struct Setting: Sendable, Hashable, CustomStringConvertible {
    /// The environment variable, `IAP_…`.
    public let variable: String
    public let kind: Kind
    /// The default as it would be written in the environment; `nil`: unset unless given.
    public let defaultValue: String?
    /// What an unset setting means when that is not simply its default ("not checked").
    public let unset: String?
    public let help: String
    public let readBy: Set<PipelineCommand>
    /// Read from the environment only: it has no flag (the logging settings, read before anything else).
    public let environmentOnly: Bool

    public init(
        _ variable: String, _ kind: Kind, default defaultValue: String? = nil, unset: String? = nil, help: String,
        readBy: Set<PipelineCommand>, environmentOnly: Bool = false
    ) {
        self.variable = variable
        self.kind = kind
        self.defaultValue = defaultValue
        self.unset = unset
        self.help = help
        self.readBy = readBy
        self.environmentOnly = environmentOnly
    }

    /// What a setting takes.
    public enum Kind: Sendable {
        /// Free text.
        case text
        /// Free text that is never printed or logged (prefer the variable to the flag: flags show in `ps`).
        case secret
        /// An `http` or `https` URL.
        case url
        /// A Redis URL (`redis://`, `unix://`, `redis-sentinel://`).
        case redisURL
        /// A path to a file.
        case file
        /// Comma-separated values, blanks around each dropped.
        case list
        /// A whole number.
        case count(ClosedRange<Int>)
        /// A size in bytes.
        case bytes(ClosedRange<Int>)
        /// A time, written in `unit` (whole milliseconds; seconds may have decimals).
        case duration(DurationUnit, ClosedRange<Duration>)
        /// One of these words, any case.
        case choice([String])
    }

    /// The unit a duration is written in: the variable's suffix (`_MS`, `_S`).
    public enum DurationUnit: String, Sendable {
        case milliseconds = "ms"
        case seconds = "s"
    }

    /// The flag of the same name: `IAP_REDIS_URL` ↔ `--redis-url`.
    public var flag: String {
        String(variable.dropFirst("IAP_".count)).lowercased().replacingOccurrences(of: "_", with: "-")
    }

    public var isSecret: Bool {
        if case .secret = kind { return true }
        return false
    }

    public var description: String { variable }

    /// How a value of this setting may be shown (`iapctl settings`, an error, a log line): a
    /// secret never; a URL with its password masked.
    public func shown(_ value: String) -> String {
        switch kind {
        case .secret: "(set, hidden)"
        case .url, .redisURL: Self.maskingPassword(in: value)
        default: value
        }
    }

    /// `scheme://user:***@rest` for `scheme://user:password@rest` (`***@` for a password alone);
    /// other text as it is.
    public static func maskingPassword(in url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        guard let at = rest.lastIndex(of: "@") else { return url }
        let credentials = rest[..<at]
        let masked = credentials.firstIndex(of: ":").map { "\(credentials[..<$0]):***" } ?? "***"
        return String(url[..<schemeEnd.upperBound]) + masked + String(rest[at...])
    }

    public static func == (lhs: Setting, rhs: Setting) -> Bool { lhs.variable == rhs.variable }
    public func hash(into hasher: inout Hasher) { hasher.combine(variable) }
}

/// The executables that read settings.
public enum PipelineCommand: String, Sendable, CaseIterable {
    case intake = "iap-intake"
    case verifier = "iap-verifier"
    case deduper = "iap-deduper"
    case granter = "iap-granter"
    case notifier = "iap-notifier"
    case webhook = "iap-webhook"
    case iapctl
    case console = "iap-console"

    public static let stages: Set<PipelineCommand> = [.verifier, .deduper, .granter, .notifier, .webhook]
    public static let all = Set(allCases)
}
