import IAPSettings

/// `IAP_CONSOLE_*`: where `iap-console` listens, who may sign in and for how long. Read by the
/// component itself (and, like every setting, checked by every process at start).
public struct ConsoleSettings: Sendable {
    public var host: String
    public var port: Int
    public var usersFile: String?
    public var sessionLifetime: Duration

    public init(reading source: SettingSource) throws(ConfigurationError) {
        host = source.text(Settings.consoleHost)!
        port = try source.count(Settings.consolePort)
        usersFile = source.given(Settings.consoleUsersFile)
        sessionLifetime = try source.duration(Settings.consoleSession)
    }

    /// What `iap-console` checks before it listens: without users, loopback only.
    public func checkExposure() throws(ConfigurationError) {
        guard usersFile == nil, !Self.isLoopback(host) else { return }
        throw ConfigurationError(
            Settings.consoleHost.variable, "\(host) is not loopback: set IAP_CONSOLE_USERS_FILE first (without it the console serves loopback only)")
    }

    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
