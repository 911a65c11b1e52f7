import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the client keys on every SIGHUP until the service group shuts down: keys are added
/// and revoked without a restart. A file that does not load is logged and the old keys stay.
public struct ClientKeysReloader: Service {
    let keyring: ClientKeyring
    let logger: Logger

    public init(keyring: ClientKeyring, logger: Logger) {
        self.keyring = keyring
        self.logger = logger
    }

    public func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            do {
                let keys = try keyring.reload()
                logger.info("client keys reloaded", metadata: ["keys": "\(keys.ids.count)"])
            } catch {
                logger.error("client keys not reloaded: the previous ones stay in force", metadata: ["error": "\(error)"])
            }
        }
    }
}
