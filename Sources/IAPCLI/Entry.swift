import ArgumentParser
import NIOCore
import NIOPosix

/// The pipeline executables' mains (intake, stages, iapctl): each `main.swift` is one call to these.
/// apple-sim, the drill and the bench are in `IAPToolsCLI`, so these link none of them.
public enum Entry {
    public static func intake() async { await serve(IntakeCommand.self) }
    public static func verifier() async { await serve(VerifierCommand.self) }
    public static func deduper() async { await serve(DeduperCommand.self) }
    public static func granter() async { await serve(GranterCommand.self) }
    public static func notifier() async { await serve(NotifierCommand.self) }
    public static func control() async { await ControlCommand.main() }

    /// A pipeline process: a stop signal that comes before its service group runs exits 0 too.
    /// Its tasks run on NIO's event loops (one per core), where its sockets live: a reply from
    /// Redis, Apple or a client resumes the task waiting for it on the thread that read it, with no
    /// hop to a second pool of threads. Nothing in these processes blocks a thread.
    private static func serve(_ command: (some AsyncParsableCommand).Type) async {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        EarlyStop.exitCleanly()
        await command.main()
    }
}
