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

    /// The text handler writes the logger's metadata and the line's own (the line's winning), as
    /// StreamLogHandler would, though it hands the metadata over only when a line is written.
    @Test func textLinesCarryTheLoggersMetadataAndTheLines() {
        final class Lines: TextOutputStream, Sendable {
            let text = Mutex("")
            func write(_ string: String) { text.withLock { $0 += string } }
        }
        let lines = Lines()
        var logger = Logger(label: "iap-test") { _ in
            TextLogHandler(StreamLogHandler(label: "iap-test", stream: lines, metadataProvider: nil))
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
}
