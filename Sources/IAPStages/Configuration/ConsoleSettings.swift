import IAPSettings

/// `IAP_CONSOLE_*`: where `iap-console` listens, who may sign in and for how long. Read by the
/// component itself (and, like every setting, checked by every process at start).
package struct ConsoleSettings: Sendable {
    package var host: String
    package var port: Int
    package var usersFile: String?
    package var sessionLifetime: Duration
    /// `scheme://host[:port]` as browsers reach the console, lowercased; `nil`: its own address.
    package var origin: String?

    package init(reading source: SettingSource) throws(ConfigurationError) {
        host = source.text(Settings.consoleHost)!
        port = try source.count(Settings.consolePort)
        usersFile = source.given(Settings.consoleUsersFile)
        sessionLifetime = try source.duration(Settings.consoleSession)
        origin = try source.given(Settings.consoleOrigin).map(Self.origin)
    }

    /// The origins a browser may send (`Origin`) for the console's own pages.
    package var origins: Set<String> {
        if let origin { return [origin] }
        let local = Self.isLoopback(host) ? ["http://localhost:\(port)", "http://127.0.0.1:\(port)"] : []
        return Set(["http://\(host):\(port)"] + local)
    }

    /// Whether the session cookie is `Secure`: browsers reach the console over https.
    package var secureCookie: Bool { origin?.hasPrefix("https://") == true }

    /// An origin as a browser writes it: `http` or `https`, a host, a port perhaps, and no path,
    /// query or user.
    static func origin(_ text: String) throws(ConfigurationError) -> String {
        let lowered = text.lowercased()
        let scheme = ["https://", "http://"].first { lowered.hasPrefix($0) }
        let rest = scheme.map { String(lowered.dropFirst($0.count)) } ?? ""
        let authority = rest.hasSuffix("/") ? String(rest.dropLast()) : rest
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-:[]")
        guard let scheme, !authority.isEmpty, authority.allSatisfy(allowed.contains), !authority.hasPrefix(":") else {
            throw ConfigurationError(
                Settings.consoleOrigin.variable, "'\(text)' is not an origin: write it as https://console.example.com (a port may follow; no path)")
        }
        return scheme + authority
    }

    /// What `iap-console` checks before it listens: without users, loopback only.
    package func checkExposure() throws(ConfigurationError) {
        guard usersFile == nil, !Self.isLoopback(host) else { return }
        throw ConfigurationError(
            Settings.consoleHost.variable, "\(host) is not loopback: set IAP_CONSOLE_USERS_FILE first (without it the console serves loopback only)")
    }

    package static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
