import ClusterHarness
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

enum ChildProcesses {
    /// Ctrl-C or SIGTERM takes the drill's or the bench's redis-server and workers down with it.
    /// Keep the returned sources alive for as long as that should hold.
    static func killOnInterrupt() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                ManagedProcess.killAll()
                Glibc.exit(130)
            }
            source.resume()
            return source
        }
    }
}
