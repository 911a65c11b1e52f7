import ArgumentParser
import NIOCore
import NIOPosix

/// What every pipeline process does first. Each executable's `main.swift` calls its own module's
/// entry (`IntakeEntry`, `WorkerEntry`, `ControlEntry`), so it links only what it runs: the stages
/// do not link the HTTP server, the intake no stage, none of them the tools.
package enum ProcessEntry {
    /// A pipeline process: a stop signal that comes before its service group runs exits 0 too.
    /// Its tasks run on NIO's event loops (one per core), where its sockets live: a reply from
    /// Redis, Apple or a client resumes the task waiting for it on the thread that read it, with no
    /// hop to a second pool of threads. Nothing in these processes blocks a thread. The tasks
    /// also prefer `EventLoopTaskExecutor`, so calling a nonisolated async function is not a hop.
    package static func serve(_ command: (some AsyncParsableCommand).Type) async {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        EarlyStop.exitCleanly()
        await withTaskExecutorPreference(EventLoopTaskExecutor.shared) { await command.main() }
    }
}
