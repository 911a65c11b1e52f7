import Foundation

/// How the tests, the bench and the drill start a `redis-server` on loopback: one command line,
/// and readiness awaited on the server's own "Ready to accept connections" line (no polling).
public struct RedisServerLaunch: Sendable {
    public var port: Int
    /// Its working folder (RDB and AOF files); created if missing.
    public var directory: URL
    /// More `redis-server` options, e.g. `["--appendonly", "yes"]` or `["--requirepass", "x"]`;
    /// later options win over the defaults.
    public var options: [String]

    public init(port: Int, directory: URL, options: [String] = []) {
        self.port = port
        self.directory = directory
        self.options = options
    }

    /// Loopback only, in the foreground, logging to stdout, no persistence unless `options` say so.
    public var arguments: [String] {
        [
            "--port", String(port), "--bind", "127.0.0.1", "--dir", directory.path, "--daemonize", "no", "--logfile", "",
            "--save", "", "--appendonly", "no",
        ] + options
    }

    /// Starts the server and returns once it accepts connections; its output goes on to `log`
    /// (or nowhere). Throws, with the server stopped, when it says it cannot start.
    public func start(environment: [String: String]? = nil, log: FileHandle? = nil) async throws -> Process {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = try Executable.find("redis-server")
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        guard await Self.awaitReady(output.fileHandleForReading, copyingTo: log) else {
            ChildKill.kill(process)
            throw LocalServerError("redis-server on port \(port) did not become ready")
        }
        return process
    }

    /// Reads a server's log until it says `marker` (or that it failed), then keeps draining it on
    /// a thread of its own, so a full pipe never stalls the server. A sentinel's marker is
    /// `+monitor master`.
    public static func awaitReady(
        _ handle: FileHandle, marker: String = "Ready to accept connections", copyingTo log: FileHandle? = nil
    ) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var buffer = ""
                var answered = false
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    log?.write(data)
                    if answered { continue }
                    buffer += String(decoding: data, as: UTF8.self)
                    if buffer.contains(marker) {
                        answered = true
                        continuation.resume(returning: true)
                    } else if buffer.contains("Address already in use") || buffer.contains("# Fatal") {
                        answered = true
                        continuation.resume(returning: false)
                    }
                }
                if !answered { continuation.resume(returning: false) }
            }
        }
    }
}
