import Foundation

/// Runs a tool to its end (python3, schemathesis) with its output in a file, its exit awaited off
/// the cooperative pool: its status and what it printed (stdout and stderr together).
package func runTool(
    _ executable: String, _ arguments: [String], environment extra: [String: String] = [:], directory: URL? = nil
) async throws -> (status: Int32, output: String) {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString).txt")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: output) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
    if let directory { process.currentDirectoryURL = directory }
    let handle = try FileHandle(forWritingTo: output)
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    let status = await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            process.waitUntilExit()
            continuation.resume(returning: process.terminationStatus)
        }
    }
    try handle.close()
    return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
}

/// The first `name` on `PATH` (the Python that `workers/test` installs packages into), else in /usr/bin.
package func executableOnPath(_ name: String) -> String? {
    let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin"]
    return folders.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// The repository's root, from this file's place in it.
package let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
