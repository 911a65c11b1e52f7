import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// One child process of the drill: started with its output in a log file, signalled, awaited.
/// Remembers whether the drill meant it to exit, so an exit nobody asked for counts as a crash.
package final class ManagedProcess: @unchecked Sendable {
    package struct Exit: Sendable, Equatable {
        package var signalled: Bool
        /// The exit code, or the signal number when `signalled`.
        package var code: Int32

        package var isClean: Bool { !signalled && code == 0 }
    }

    private struct State {
        var exit: Exit?
        var waiters: [CheckedContinuation<Exit, Never>] = []
        var expected = false
    }

    /// Every child still running, so an interrupted drill can take them down with it.
    private static let live = NIOLockedValueBox<Set<Int32>>([])

    package let name: String
    package let pid: Int32
    /// What it is, without the launch number: `iap-verifier` for `iap-verifier#7`.
    package var kind: String { String(name.split(separator: "#").first ?? Substring(name)) }
    /// Its stdout and stderr.
    package let log: URL
    private let process: Process
    private let state = NIOLockedValueBox(State())

    private init(name: String, process: Process, log: URL) {
        self.name = name
        self.process = process
        self.log = log
        self.pid = process.processIdentifier
    }

    static func launch(
        name: String, executable: URL, arguments: [String], environment: [String: String], log: URL
    ) throws -> ManagedProcess {
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw ClusterError("cannot create \(log.path)")
        }
        let output = try FileHandle(forWritingTo: log)
        output.seekToEndOfFile()
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let box = NIOLockedValueBox<ManagedProcess?>(nil)
        process.terminationHandler = { finished in
            let exit = Exit(signalled: finished.terminationReason == .uncaughtSignal, code: finished.terminationStatus)
            box.withLockedValue { $0 }?.exited(exit)
            try? output.close()
        }
        try process.run()
        live.withLockedValue { _ = $0.insert(process.processIdentifier) }
        let managed = ManagedProcess(name: name, process: process, log: log)
        box.withLockedValue { $0 = managed }
        // The handler may have run before `box` was filled: pick the exit up here then.
        if !process.isRunning {
            managed.exited(Exit(signalled: process.terminationReason == .uncaughtSignal, code: process.terminationStatus))
        }
        return managed
    }

    /// SIGKILLs every child still running (the drill was interrupted).
    package static func killAll() {
        for pid in live.withLockedValue({ $0 }) {
            Glibc.kill(pid, SIGCONT)
            Glibc.kill(pid, SIGKILL)
        }
    }

    private func exited(_ exit: Exit) {
        _ = Self.live.withLockedValue { $0.remove(pid) }
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Exit, Never>] in
            guard state.exit == nil else { return [] }
            state.exit = exit
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: exit) }
    }

    package var exitStatus: Exit? { state.withLockedValue { $0.exit } }
    package var isRunning: Bool { exitStatus == nil }
    /// It exited without the drill asking it to.
    package var crashed: Bool { state.withLockedValue { $0.exit != nil && !$0.expected } }

    /// The last lines it wrote, for error messages.
    package func logTail(lines: Int = 20) -> String {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    package func signal(_ number: Int32) {
        guard isRunning else { return }
        Glibc.kill(pid, number)
    }

    /// Sends a signal that ends the process and waits for the exit.
    @discardableResult
    package func stop(with number: Int32) async -> Exit {
        state.withLockedValue { $0.expected = true }
        signal(number)
        return await waitForExit()
    }

    package func waitForExit() async -> Exit {
        await withCheckedContinuation { continuation in
            let done = state.withLockedValue { state -> Exit? in
                if let exit = state.exit { return exit }
                state.waiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}
