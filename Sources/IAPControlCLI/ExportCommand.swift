import ArgumentParser
import Foundation
import IAPCLI
import IAPOperations
import PipelineCore

/// `iapctl export transactions --since D [--until D] [--format ndjson|csv] [--out FILE] [--resume]`.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Export the books for a warehouse.", subcommands: [ExportTransactionsCommand.self])
}

struct ExportTransactionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transactions", abstract: "Every purchase granted in a range of UTC days, with its sale fields, refunds and owner.",
        discussion: """
            Read from the grant records (SCAN, a page at a time: harmless beside the pipeline), not the stream. With --out, \\
            where it got to is kept in FILE.progress after every page: --resume goes on from there (appending), and the file \\
            is removed at the end. A record may come twice (SCAN's promise is at least once): dedupe on unit. Columns: \\
            docs/reports.md.
            """)
    @OptionGroup var redis: RedisOptions
    @Option(help: "The first UTC day, YYYY-MM-DD (by granted_at).") var since: String
    @Option(help: "The last UTC day, YYYY-MM-DD (default: today).") var until: String?
    @Option(help: "ndjson or csv.") var format: String = "ndjson"
    @Option(help: "Write to this file instead of standard output.") var out: String?
    @Flag(help: "Go on from FILE.progress (with --out).") var resume = false
    @Option(help: "Stop after the page where this many records were written (go on with --resume).") var maxRecords: Int?

    func validate() throws {
        guard FigureDay(since) != nil else { throw ValidationError("--since must be a UTC day, YYYY-MM-DD") }
        if let until { guard let last = FigureDay(until), last >= FigureDay(since)! else { throw ValidationError("--until must be a UTC day, YYYY-MM-DD, not before --since") } }
        guard TransactionExport.Format(rawValue: format) != nil else { throw ValidationError("--format must be ndjson or csv") }
        if resume || maxRecords != nil { guard out != nil else { throw ValidationError("--resume and --max-records need --out") } }
        if let maxRecords { guard maxRecords > 0 else { throw ValidationError("--max-records must be at least 1") } }
    }

    func run() async throws {
        let first = FigureDay(since)!, last = until.flatMap { FigureDay($0) } ?? FigureDay(milliseconds: currentTimeMs())
        let configuration = loadConfiguration(of: self)
        let (out, resume, maxRecords, format) = (out, resume, maxRecords, TransactionExport.Format(rawValue: format)!)
        let progressFile = out.map { $0 + ".progress" }
        var start = TransactionExport.Progress()
        if resume, let progressFile {
            guard let data = FileManager.default.contents(atPath: progressFile),
                let saved = try? JSONDecoder().decode(TransactionExport.Progress.self, from: data)
            else { throw ValidationError("nothing to resume: \(progressFile) is missing or unreadable") }
            start = saved
        }
        let sink = try ExportSink(path: out, append: resume)
        let left = try await withStore(configuration) { store in
            let export = TransactionExport(store: store, since: first, until: last, format: format)
            if !resume, let header = export.header { try sink.write([header]) }
            return try await export.run(from: start, maxRecords: maxRecords) { lines, progress in
                try sink.write(lines)
                if let progressFile, let progress {
                    try JSONEncoder().encode(progress).write(to: URL(fileURLWithPath: progressFile), options: .atomic)
                }
            }
        }
        try sink.close()
        if let progressFile {
            if let left {
                FileHandle.standardError.write(Data("\(left.written) records written; go on with --resume\n".utf8))
            } else {
                try? FileManager.default.removeItem(atPath: progressFile)
                FileHandle.standardError.write(Data("done\n".utf8))
            }
        }
    }
}

/// Where the lines go: a file (created, or appended to) or standard output.
final class ExportSink {
    private let handle: FileHandle

    init(path: String?, append: Bool) throws {
        guard let path else {
            handle = .standardOutput
            return
        }
        if !append || !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else { throw ValidationError("cannot write \(path)") }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw ValidationError("cannot write \(path)") }
        handle.seekToEndOfFile()
        self.handle = handle
    }

    func write(_ lines: [String]) throws {
        guard !lines.isEmpty else { return }
        try handle.write(contentsOf: Data((lines.joined(separator: "\n") + "\n").utf8))
    }

    func close() throws {
        if handle !== FileHandle.standardOutput { try handle.close() }
    }
}
