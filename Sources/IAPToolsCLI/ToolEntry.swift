/// The mains of the tools that play Apple and exercise the pipeline: apple-sim, the drill, the bench.
public enum ToolEntry {
    public static func appleSim() async { await AppleSimCommand.main() }
    public static func drill() async { await DrillCommand.main() }
    public static func bench() async { await BenchCommand.main() }
}
