import IAPSettings

/// The intake's own settings: its port, what a request may be, who may call it and how often,
/// how full the queue may get, its TLS. Read by the component itself (`init(reading:)`); every
/// process reads them at start with the rest, so a bad one stops any of them, as it always has.
package struct IntakeSettings: Sendable {
    package var httpPort: Int
    package var maxBodyBytes: Int
    /// JSON file of the game backends' keys (key id → secret); set: every request to a guarded
    /// route (`/v1/receipts*`, `/v1/users/*`, `/v1/offers/*`, `/v1/support/*`) must be signed with one.
    package var clientKeysFile: String?
    /// `IAP_ALLOW_OPEN_INTAKE`: an intake without client keys may listen beyond loopback.
    package var allowOpenIntake: Bool
    /// `IAP_MAX_WAITING_PER_KEY`: long-polls one client key may have waiting on one intake.
    package var maxWaitingPerKey: Int
    /// `IAP_MAX_QUEUE_DEPTH`: jobs waiting to be verified past which a new submission is refused; 0: no limit.
    package var maxQueueDepth: Int
    /// New submissions a second, fleet-wide, per client key and per user; 0: no limit.
    package var ratePerKey: Int
    package var ratePerUser: Int
    /// PEM files of the intake's own TLS certificate chain and private key (both or neither).
    package var tlsCertFile: String?
    package var tlsKeyFile: String?

    package init(reading source: SettingSource) throws(ConfigurationError) {
        httpPort = try source.count(Settings.httpPort)
        maxBodyBytes = try source.count(Settings.maxBodyBytes)
        clientKeysFile = source.given(Settings.clientKeysFile)
        allowOpenIntake = try source.choice(Settings.allowOpenIntake) == "on"
        maxWaitingPerKey = try source.count(Settings.maxWaitingPerKey)
        maxQueueDepth = try source.count(Settings.maxQueueDepth)
        ratePerKey = try source.count(Settings.ratePerKey)
        ratePerUser = try source.count(Settings.ratePerUser)
        let tls = try source.together([Settings.tlsCertFile, Settings.tlsKeyFile], "the other (the intake's TLS certificate and key)")
        (tlsCertFile, tlsKeyFile) = (tls[0], tls[1])
    }
}
