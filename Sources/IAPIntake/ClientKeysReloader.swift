import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the client keys on every SIGHUP until the service group shuts down: keys are added
/// and revoked without a restart. A file that does not load is logged and the old keys stay.
public struct ClientKeysReloader: Service {
    let keyring: ClientKeyring
    let logger: Logger
    let hangups: UnixSignalsSequence

    /// Traps SIGHUP at once (before the server listens: a SIGHUP that came before the trap would
    /// end the process).
    public init(keyring: ClientKeyring, logger: Logger) async {
        self.keyring = keyring
        self.logger = logger
        hangups = await UnixSignalsSequence(trapping: .sighup)
    }

    public func run() async throws {
        for await _ in hangups.cancelOnGracefulShutdown() {
            do {
                let keys = try keyring.reload()
                logger.info("client keys reloaded", metadata: ["keys": "\(keys.ids.count)"])
            } catch {
                logger.error("client keys not reloaded: the previous ones stay in force", metadata: ["error": "\(error)"])
            }
        }
    }
}
