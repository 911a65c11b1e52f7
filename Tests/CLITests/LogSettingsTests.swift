import Foundation
@testable import IAPCLI
import IAPSettings
import Logging
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
}
