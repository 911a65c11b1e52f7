import IAPCLI
import ClusterHarness
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What the drill and the bench commands share: they start child processes from a folder of
/// built executables, report progress on stderr and print their result as a table or JSON.
enum HarnessCommand {
    /// `--bin-dir`, or the folder of the running executable (they are built side by side).
    static func binDirectory(_ option: String?) -> URL {
        if let option { return URL(fileURLWithPath: option) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    static let progress: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    static func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Ctrl-C or SIGTERM takes the redis-server and workers down with the command.
    /// Keep the returned sources alive for as long as that should hold.
    static func killChildrenOnInterrupt() -> [any DispatchSourceSignal] {
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
