import Foundation
import LocalServers
import Synchronization

/// The child processes a test harness started, by a key of its choosing (a port), behind a lock:
/// what lets a server handle be shared between tasks without `@unchecked Sendable`.
final class ChildProcesses: Sendable {
    private let children = Mutex<[Int: Process]>([:])

    func keep(_ process: sending Process, as key: Int) {
        children.withLock { $0[key] = process }
    }

    var keys: Set<Int> { children.withLock { Set($0.keys) } }

    /// Stops one with SIGKILL, as a crash would (none under `key`: nothing to do).
    func kill(_ key: Int) {
        children.withLock { children in
            if let process = children.removeValue(forKey: key) { ChildKill.kill(process) }
        }
    }

    func killAll() {
        children.withLock { children in
            for process in children.values { ChildKill.kill(process) }
            children = [:]
        }
    }

    /// For a `deinit`: those still running are asked to stop.
    func terminateRunning() {
        children.withLock { children in
            for process in children.values where process.isRunning { process.terminate() }
        }
    }
}
