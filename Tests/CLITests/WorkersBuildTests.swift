import Foundation
import Testing

/// `workers/run`, `workers/drill` and `workers/bench` build through `workers/build`, which shows a
/// first build's progress (5–10 minutes) instead of hiding it behind `| tail -1`.
@Suite struct WorkersBuildTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theBuildShowsItsProgressAndEveryErrorAndNoScriptHidesIt() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Self.root.appendingPathComponent("workers/build").path, "--progress"]
        let input = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        try process.run()
        let steps = (1...200).map { "[\($0)/200] Compiling File\($0).swift" }
        let lines = Array(steps[0..<100]) + ["Sources/X.swift:1:1: error: something broke"] + Array(steps[100...])
        input.fileHandleForWriting.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        try input.fileHandleForWriting.close()
        let shown = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let progress = shown.split(separator: "\n").filter { $0.contains("building:") }
        #expect(progress.count == 21, "\(shown)")  // 0 %, 5 %, … 100 %
        #expect(progress.last?.contains("100%") == true)
        #expect(shown.contains("error: something broke"))

        for script in ["run", "drill", "bench", "migrate-bench", "console-bench"] {
            let text = try String(contentsOf: Self.root.appendingPathComponent("workers/\(script)"), encoding: .utf8)
            #expect(text.contains("workers/build"), "workers/\(script) builds some other way")
            #expect(!text.contains("| tail"), "workers/\(script) hides the build's output")
        }
    }
}
