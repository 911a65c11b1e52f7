import NIOCore
import NIOPosix

/// The mains of the tools that play Apple and exercise the pipeline: apple-sim, the drill, the bench.
package enum ToolEntry {
    /// apple-sim's tasks run on NIO's event loops, as the pipeline's do (it blocks no thread). The
    /// drill and the bench wait for child processes, so they keep Swift's own pool.
    package static func appleSim() async {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        await AppleSimCommand.main()
    }

    package static func drill() async { await DrillCommand.main() }
    package static func bench() async { await BenchCommand.main() }
}
