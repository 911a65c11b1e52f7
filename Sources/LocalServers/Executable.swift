import Foundation

/// The programs the tests, the drill and the bench start beside the pipeline (`redis-server`,
/// `redis-cli`, `redis-benchmark`), found once, the same way for all of them.
public enum Executable {
    /// `name` on `PATH` or in `/usr/sbin`, `/usr/bin`, `/usr/local/bin`; `REDIS_SERVER` names
    /// another `redis-server` (a build of one's own).
    public static func find(_ name: String) throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if name == "redis-server", let path = environment["REDIS_SERVER"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let folders = (environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/usr/local/bin"]
        for folder in folders where !folder.isEmpty {
            let candidate = URL(fileURLWithPath: folder).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw LocalServerError("\(name) not found on PATH (apt-get install redis-server redis-tools, or workers/deps)")
    }

    /// Runs `name` with `arguments` to its end: its exit status and what it printed (stdout and
    /// stderr). The wait is a thread's of its own, never one of the concurrency pool's (a
    /// `redis-cli --cluster` call takes seconds, and the pool has a thread per core).
    public static func run(_ name: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await run(at: try find(name), arguments)
    }

    /// The same for the executable at `executable`; `environment`: its whole environment (`nil`: this process's).
    public static func run(
        at executable: URL, _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> (status: Int32, output: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runToEnd(executable, arguments, environment) })
            }.start()
        }
    }

    private static func runToEnd(
        _ executable: URL, _ arguments: [String], _ environment: [String: String]?
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, said)
    }
}

/// A child server that could not be found or started.
public struct LocalServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
