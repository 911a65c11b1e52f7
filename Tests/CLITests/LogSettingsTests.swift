import Foundation
@testable import IAPCLI
import IAPSettings
import Logging
import Synchronization
import Testing

@Suite struct LogSettingsTests {
    @Test func levelAndFormatComeFromTheEnvironment() throws {
        #expect(try LogSettings(environment: [:]) == LogSettings(level: .info, json: false))
        #expect(try LogSettings(environment: ["IAP_LOG_LEVEL": "TRACE", "IAP_LOG_FORMAT": "json"]) == LogSettings(level: .trace, json: true))
        // The older LOG_LEVEL still counts when IAP_LOG_LEVEL is unset.
        #expect(try LogSettings(environment: ["LOG_LEVEL": "debug"]).level == .debug)
        #expect(try LogSettings(environment: ["LOG_LEVEL": "debug", "IAP_LOG_LEVEL": "error"]).level == .error)
        #expect { try LogSettings(environment: ["IAP_LOG_LEVEL": "loud"]) } throws: { ($0 as? ConfigurationError)?.variable == "IAP_LOG_LEVEL" }
        #expect { try LogSettings(environment: ["IAP_LOG_FORMAT": "xml"]) } throws: { ($0 as? ConfigurationError)?.variable == "IAP_LOG_FORMAT" }
    }

    @Test func jsonLinesCarryTheTimeInUTCWithMilliseconds() {
        #expect(JSONLogHandler.timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(JSONLogHandler.timestamp(Date(timeIntervalSince1970: 1_700_000_000.5)) == "2023-11-14T22:13:20.500Z")
        #expect(JSONLogHandler.text(.array(["a", "b"])) == #"["a", "b"]"#)
    }

    /// The text handler writes the logger's metadata and the line's own (the line's winning),
    /// sorted by key, in `StreamLogHandler`'s shape, one line a write.
    @Test func textLinesCarryTheLoggersMetadataAndTheLines() {
        final class Lines: Sendable {
            let text = Mutex("")
            func write(_ bytes: [UInt8]) { text.withLock { $0 += String(decoding: bytes, as: UTF8.self) } }
        }
        let lines = Lines()
        var logger = Logger(label: "iap-test") { label in
            TextLogHandler(label: label, output: { lines.write($0) })
        }
        logger[metadataKey: "request"] = "r1"
        logger[metadataKey: "ticket"] = "t0"
        logger.info("taken", metadata: ["ticket": "t1"])
        logger.debug("not written")
        logger[metadataKey: "request"] = nil
        logger.warning("bare")
        let written = lines.text.withLock { $0 }.split(separator: "\n").map(String.init)
        #expect(written.count == 2, "\(written)")
        #expect(written.first?.contains("info iap-test: request=r1 ticket=t1 [") == true, "\(written)")
        #expect(written.last?.contains("warning iap-test: ticket=t0 [") == true, "\(written)")
    }

    struct Refused: Error, CustomStringConvertible { var description: String { "refused" } }

    /// A line is `StreamLogHandler`'s: `<time> <level> <label>: <metadata> [<source>] <message>`,
    /// the time local to the second with its offset; a logged error's message and type are metadata.
    @Test func aTextLineHasStreamLogHandlersShape() throws {
        final class Lines: Sendable {
            let text = Mutex("")
            func write(_ bytes: [UInt8]) { text.withLock { $0 += String(decoding: bytes, as: UTF8.self) } }
        }
        let lines = Lines()
        var logger = Logger(label: "iap-test") { label in TextLogHandler(label: label, output: { lines.write($0) }) }
        logger.logLevel = .debug
        logger.debug("plain")
        logger.error("failed", error: Refused())
        let written = lines.text.withLock { $0 }.split(separator: "\n").map(String.init)
        #expect(written.count == 2, "\(written)")
        let shape = try Regex(#"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{4} debug iap-test: \[CLITests\] plain$"#)
        #expect(written.first?.wholeMatch(of: shape) != nil, "\(written)")
        #expect(written.last?.hasSuffix(" error iap-test: error.message=refused error.type=CLITests.LogSettingsTests.Refused [CLITests] failed") == true, "\(written)")
    }
}
