import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Kills a child server and knows it dead without Foundation's notice of its exit. On Linux that
/// notice is a socket the child holds open; a child another thread spawns at the same moment can
/// inherit it, and the first one's exit then goes unnoticed while the second lives
/// (swift-corelibs-foundation #4795): `waitUntilExit` would wait for as long, on a thread of the
/// concurrency pool. The kernel knows better: the process is dead once `/proc` shows it gone or a
/// zombie (its ports and files are free then; Foundation reaps it whenever it notices).
public enum ChildKill {
    /// Sends SIGKILL to `process` (when it runs) and returns once it is dead, or after `within`.
    public static func kill(_ process: Process, within: Duration = .seconds(30)) {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        _ = Glibc.kill(pid, SIGKILL)
        let deadline = ContinuousClock.now + within
        while !isDead(pid), ContinuousClock.now < deadline {
            usleep(1_000)  // polling the kernel's view of another process: no event to await
        }
    }

    /// Whether `pid` is gone or a zombie, by `/proc/<pid>/stat` (its state follows the name's `)`).
    public static func isDead(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")")
        else { return true }
        let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
        return state == "Z" || state == "X"
    }
}
