import ArgumentParser

/// The executables' mains: each `main.swift` is one call to these.
public enum Entry {
    public static func intake() async { await serve(IntakeCommand.self) }
    public static func verifier() async { await serve(VerifierCommand.self) }
    public static func deduper() async { await serve(DeduperCommand.self) }
    public static func granter() async { await serve(GranterCommand.self) }
    public static func notifier() async { await serve(NotifierCommand.self) }
    public static func control() async { await ControlCommand.main() }
    public static func appleSim() async { await AppleSimCommand.main() }
    public static func drill() async { await DrillCommand.main() }
    public static func bench() async { await BenchCommand.main() }

    /// A pipeline process: a stop signal that comes before its service group runs exits 0 too.
    private static func serve(_ command: (some AsyncParsableCommand).Type) async {
        EarlyStop.exitCleanly()
        await command.main()
    }
}
