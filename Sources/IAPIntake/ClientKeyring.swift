import IAPSettings
import Synchronization

/// The client keys in force, read from their file at start and again on `reload()` (SIGHUP).
package final class ClientKeyring: Sendable {
    package let file: String
    private let keys: Mutex<ClientKeys>

    package init(file: String) throws(ConfigurationError) {
        self.file = file
        keys = Mutex(try ClientKeys.load(file: file))
    }

    package var current: ClientKeys { keys.withLock { $0 } }

    /// Reads the file again. A file that does not load leaves the keys in force as they were.
    @discardableResult
    package func reload() throws(ConfigurationError) -> ClientKeys {
        let loaded = try ClientKeys.load(file: file)
        keys.withLock { $0 = loaded }
        return loaded
    }
}
