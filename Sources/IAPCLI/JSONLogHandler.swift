import Foundation
import Logging
import PlainJSON

/// One JSON object per line on stderr (`IAP_LOG_FORMAT=json`), for log shippers: `time` (ISO
/// 8601, UTC, milliseconds), `level`, `label`, `message`, `source`, and each metadata value as a
/// member (nested values as text). Written by hand: swift-log has no JSON handler, and none of the
/// packages this project uses offers one.
package struct JSONLogHandler: LogHandler {
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    let label: String

    package init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        log(
            level: event.level, message: event.message, metadata: event.metadata, source: event.source, file: event.file,
            function: event.function, line: event.line)
    }

    package func log(
        level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt
    ) {
        var members: JSONObject = [:]
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit { merged.merge(explicit) { _, new in new } }
        for (key, value) in merged { members[key] = .string(Self.text(value)) }
        members["time"] = .string(Self.timestamp(Date()))
        members["level"] = .string(level.rawValue)
        members["label"] = .string(label)
        members["message"] = .string(message.description)
        members["source"] = .string(source)
        let text = JSONValue.object(members).canonicalText + "\n"
        // One write per line: lines of concurrent loggers never interleave.
        text.utf8CString.withUnsafeBufferPointer { buffer in
            _ = Foundation.write(STDERR_FILENO, buffer.baseAddress, buffer.count - 1)
        }
    }

    static func text(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): return text
        case .stringConvertible(let convertible): return convertible.description
        case .array, .dictionary: return value.description
        }
    }

    /// `2026-11-22T22:50:00.123Z`, without a formatter object (cheap at trace level).
    static func timestamp(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        let milliseconds = Int((interval - Double(seconds)) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int = 2) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(width - text.count, 0)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T\(pad(parts.tm_hour)):"
            + "\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(Int32(milliseconds), 3))Z"
    }
}
