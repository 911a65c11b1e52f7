import Foundation
import Logging
import Synchronization

/// swift-log's `StreamLogHandler`'s lines on stderr, written here: `<time> <level> <label>:
/// <key=value …> [<source>] <message>`, the time local with its offset, the metadata sorted by key
/// (the logger's, the provider's, then the line's own, the line's winning; a logged error as
/// `error.message` and `error.type`). Why not `StreamLogHandler` itself: it formats its metadata
/// every time the metadata is set (Hummingbird sets a request id on every request's logger: 2.5 %
/// of the intake's CPU once), and a line written through it was about 30 thousand instructions
/// (callgrind: the metadata merged twice and sorted through a lazy map, the time through
/// `localtime` and `strftime` for every line), the grant stage's largest single cost a job.
/// One `write` a line, as `JSONLogHandler`: lines of concurrent loggers never interleave.
package struct TextLogHandler: LogHandler {
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let output: @Sendable ([UInt8]) -> Void

    /// To stderr, with the logging system's metadata provider, as `StreamLogHandler.standardError`.
    package init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.init(label: label, metadataProvider: metadataProvider) { line in
            line.withUnsafeBufferPointer { bytes in _ = Foundation.write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
        }
    }

    /// Lines (UTF-8, each with its newline) to `output` instead of stderr (a test's).
    package init(label: String, metadataProvider: Logger.MetadataProvider? = nil, output: @escaping @Sendable ([UInt8]) -> Void) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.output = output
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Written as bytes: appending to a `String` was about 330 instructions a piece, 22 a line.
    package func log(event: LogEvent) {
        var line: [UInt8] = []
        line.reserveCapacity(256)
        line.append(contentsOf: Self.clock.timestamp().utf8)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: event.level.rawValue.utf8)
        if !label.isEmpty {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: label.utf8)
        }
        line.append(UInt8(ascii: ":"))
        for (key, value) in effectiveMetadata(event).sorted(by: { $0.key < $1.key }) {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: key.utf8)
            line.append(UInt8(ascii: "="))
            line.append(contentsOf: value.description.utf8)
        }
        line.append(contentsOf: " [".utf8)
        line.append(contentsOf: event.source.utf8)
        line.append(contentsOf: "] ".utf8)
        line.append(contentsOf: event.message.description.utf8)
        line.append(UInt8(ascii: "\n"))
        output(line)
    }

    /// The logger's metadata, the provider's, then the line's own, each later one winning; a
    /// list, not a merged dictionary: a line has a handful, and merging hashed every key twice.
    private func effectiveMetadata(_ event: LogEvent) -> [(key: String, value: Logger.Metadata.Value)] {
        var items = metadata.map { (key: $0.key, value: $0.value) }
        func put(_ key: String, _ value: Logger.Metadata.Value) {
            if let place = items.firstIndex(where: { $0.key == key }) { items[place].value = value } else { items.append((key, value)) }
        }
        if let provided = metadataProvider?.get() { for (key, value) in provided { put(key, value) } }
        if let explicit = event.metadata { for (key, value) in explicit { put(key, value) } }
        if let error = event.error {
            put("error.message", "\(error)")
            put("error.type", "\(String(reflecting: type(of: error)))")
        }
        return items
    }

    private static let clock = LocalSecondClock()
}

/// The local time to the second as `StreamLogHandler` writes it (`%Y-%m-%dT%H:%M:%S%z`), made
/// once a second, not once a line.
private final class LocalSecondClock: Sendable {
    private let last = Mutex<(second: time_t, text: String)>((-1, ""))

    func timestamp() -> String {
        let now = time(nil)
        if let text = last.withLock({ $0.second == now ? $0.text : nil }) { return text }
        let text = Self.format(now)
        last.withLock { $0 = (now, text) }
        return text
    }

    static func format(_ second: time_t) -> String {
        var second = second
        var parts = tm()
        guard localtime_r(&second, &parts) != nil else { return "<unknown>" }
        var buffer = [Int8](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
