import IAPSettings
import IAPStages

/// Where an intake may listen. Without client keys anyone who reaches it may submit receipts for
/// any user and write users' consent and consumption facts, so such an intake listens on loopback
/// only (behind a proxy on the same host, or for a local run) unless `IAP_ALLOW_OPEN_INTAKE=on`
/// says the operator means it: Redis's protected mode, for the same reason.
package enum IntakeExposure {
    package static func check(_ configuration: PipelineConfiguration) throws(ConfigurationError) {
        guard configuration.intake.clientKeysFile == nil, !configuration.intake.allowOpenIntake, !LoopbackHost.contains(configuration.httpHost) else {
            return
        }
        throw ConfigurationError(
            Settings.clientKeysFile.variable,
            "is not set, and \(Settings.httpHost.variable)=\(configuration.httpHost) is not loopback: anyone who reaches the "
                + "intake could submit receipts for any user and write users' facts. Set \(Settings.clientKeysFile.variable) "
                + "(docs/security.md), listen on 127.0.0.1, or set \(Settings.allowOpenIntake.variable)=on")
    }

}
