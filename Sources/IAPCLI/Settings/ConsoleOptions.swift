import ArgumentParser
import IAPSettings

/// `iap-console`'s listener and sign-ins.
package struct ConsoleOptions: SettingsGroup {
    @Option(setting: Settings.consoleHost) var consoleHost: String?
    @Option(setting: Settings.consolePort) var consolePort: String?
    @Option(setting: Settings.consoleUsersFile) var consoleUsersFile: String?
    @Option(setting: Settings.consoleOrigin) var consoleOrigin: String?
    @Option(setting: Settings.consoleSession) var consoleSessionS: String?

    package init() {}
}

/// `iapctl console`'s port and sign-in length (it listens on loopback alone, without users).
package struct LocalConsoleOptions: SettingsGroup {
    @Option(setting: Settings.consolePort) var consolePort: String?
    @Option(setting: Settings.consoleSession) var consoleSessionS: String?

    package init() {}
}
