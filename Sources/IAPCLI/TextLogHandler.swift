import Logging

/// swift-log's `StreamLogHandler` on stderr, with the logger's metadata kept here and handed to it
/// only when a line is written. `StreamLogHandler` formats its metadata every time the metadata
/// is set, and Hummingbird sets a request id on every request's logger: 2.5 % of the intake's CPU
/// in its profile went to formatting metadata for lines that were never written.
package struct TextLogHandler: LogHandler {
    private var stream: StreamLogHandler
    package var metadata: Logger.Metadata = [:]

    package init(label: String) {
        self.init(StreamLogHandler.standardError(label: label))
    }

    /// Around another stream's handler (a test's).
    package init(_ stream: StreamLogHandler) {
        self.stream = stream
    }

    package var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    package var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        guard !metadata.isEmpty else { return stream.log(event: event) }
        var event = event
        event.metadata = event.metadata.map { metadata.merging($0) { _, explicit in explicit } } ?? metadata
        stream.log(event: event)
    }
}
