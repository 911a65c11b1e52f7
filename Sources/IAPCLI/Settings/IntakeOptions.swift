import ArgumentParser
import IAPSettings

/// The intake's HTTP server.
package struct IntakeOptions: SettingsGroup {
    @Option(setting: Settings.httpHost) var httpHost: String?
    @Option(setting: Settings.httpPort) var httpPort: String?
    @Option(setting: Settings.maxBodyBytes) var maxBodyBytes: String?
    @Option(setting: Settings.clientKeysFile) var clientKeysFile: String?
    @Option(setting: Settings.allowOpenIntake) var allowOpenIntake: String?
    @Option(setting: Settings.maxWaitingPerKey) var maxWaitingPerKey: String?
    @Option(setting: Settings.appleOnlineChecks) var appleOnlineChecks: String?
    @Option(setting: Settings.metricsPort) var metricsPort: String?
    @Option(setting: Settings.tlsCertFile) var tlsCertFile: String?
    @Option(setting: Settings.tlsKeyFile) var tlsKeyFile: String?
    @Option(setting: Settings.maxQueueDepth) var maxQueueDepth: String?
    @Option(setting: Settings.ratePerKey) var ratePerKey: String?
    @Option(setting: Settings.ratePerUser) var ratePerUser: String?

    package init() {}
}
