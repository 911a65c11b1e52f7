import ArgumentParser
import IAPSettings

/// The intake's HTTP server.
public struct IntakeOptions: SettingsGroup {
    @Option(name: Settings.httpHost.name, help: Settings.httpHost.argumentHelp) var httpHost: String?
    @Option(name: Settings.httpPort.name, help: Settings.httpPort.argumentHelp) var httpPort: String?
    @Option(name: Settings.maxBodyBytes.name, help: Settings.maxBodyBytes.argumentHelp) var maxBodyBytes: String?
    @Option(name: Settings.clientKeysFile.name, help: Settings.clientKeysFile.argumentHelp) var clientKeysFile: String?
    @Option(name: Settings.allowOpenIntake.name, help: Settings.allowOpenIntake.argumentHelp) var allowOpenIntake: String?
    @Option(name: Settings.maxWaitingPerKey.name, help: Settings.maxWaitingPerKey.argumentHelp) var maxWaitingPerKey: String?
    @Option(name: Settings.appleOnlineChecks.name, help: Settings.appleOnlineChecks.argumentHelp) var appleOnlineChecks: String?
    @Option(name: Settings.metricsPort.name, help: Settings.metricsPort.argumentHelp) var metricsPort: String?
    @Option(name: Settings.tlsCertFile.name, help: Settings.tlsCertFile.argumentHelp) var tlsCertFile: String?
    @Option(name: Settings.tlsKeyFile.name, help: Settings.tlsKeyFile.argumentHelp) var tlsKeyFile: String?
    @Option(name: Settings.maxQueueDepth.name, help: Settings.maxQueueDepth.argumentHelp) var maxQueueDepth: String?
    @Option(name: Settings.ratePerKey.name, help: Settings.ratePerKey.argumentHelp) var ratePerKey: String?
    @Option(name: Settings.ratePerUser.name, help: Settings.ratePerUser.argumentHelp) var ratePerUser: String?

    public init() {}

    public var flags: [Setting: String?] {
        [
            Settings.httpHost: httpHost,
            Settings.httpPort: httpPort,
            Settings.maxBodyBytes: maxBodyBytes,
            Settings.clientKeysFile: clientKeysFile,
            Settings.allowOpenIntake: allowOpenIntake,
            Settings.metricsPort: metricsPort,
            Settings.appleOnlineChecks: appleOnlineChecks,
            Settings.maxWaitingPerKey: maxWaitingPerKey,
            Settings.tlsCertFile: tlsCertFile,
            Settings.tlsKeyFile: tlsKeyFile,
            Settings.maxQueueDepth: maxQueueDepth,
            Settings.ratePerKey: ratePerKey,
            Settings.ratePerUser: ratePerUser,
        ]
    }
}
