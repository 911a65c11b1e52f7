import Logging
import ServiceLifecycle
import UnixSignals

/// Rereads a file on SIGHUP (the intake's client keys, the console's users): `reload` returns a
/// line for the log, or throws, and then what was read before stays in force.
package struct HangupReloader: Service {
    let what: String
    let reload: @Sendable () throws -> String
    let logger: Logger
    let hangups: UnixSignalsSequence

    /// Traps SIGHUP at once (before the server listens: a SIGHUP that came before the trap would
    /// end the process).
    package init(_ what: String, logger: Logger, reload: @escaping @Sendable () throws -> String) async {
        self.what = what
        self.reload = reload
        self.logger = logger
        hangups = await UnixSignalsSequence(trapping: .sighup)
    }

    package func run() async throws {
        for await _ in hangups.cancelOnGracefulShutdown() {
            do {
                let done = try reload()
                logger.info("\(what) reloaded", metadata: ["read": "\(done)"])
            } catch {
                logger.error("\(what) not reloaded: the previous ones stay in force", metadata: ["error": "\(error)"])
            }
        }
    }
}
