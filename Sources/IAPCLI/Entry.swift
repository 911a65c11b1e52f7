import ArgumentParser

/// The executables' mains: each `main.swift` is one call to these.
public enum Entry {
    public static func intake() async {
        EarlyStop.exitCleanly()
        await IntakeCommand.main()
    }
    public static func verifier() async {
        EarlyStop.exitCleanly()
        await VerifierCommand.main()
    }
    public static func deduper() async {
        EarlyStop.exitCleanly()
        await DeduperCommand.main()
    }
    public static func granter() async {
        EarlyStop.exitCleanly()
        await GranterCommand.main()
    }
    public static func control() async { await ControlCommand.main() }
    public static func appleSim() async { await AppleSimCommand.main() }
    public static func drill() async { await DrillCommand.main() }
    public static func bench() async { await BenchCommand.main() }
}
