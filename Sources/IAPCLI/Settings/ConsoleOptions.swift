import ArgumentParser
import IAPSettings

/// `iap-console`'s listener and sign-ins.
public struct ConsoleOptions: SettingsGroup {
    @Option(setting: Settings.consoleHost) var consoleHost: String?
    @Option(setting: Settings.consolePort) var consolePort: String?
    @Option(setting: Settings.consoleUsersFile) var consoleUsersFile: String?
    @Option(setting: Settings.consoleOrigin) var consoleOrigin: String?
    @Option(setting: Settings.consoleSession) var consoleSessionS: String?

    public init() {}
}
