import Foundation
import IAPSettings
import Logging
import NIOConcurrencyHelpers

/// How every process logs, from the environment only (it is read before anything else):
/// `IAP_LOG_LEVEL` (`trace` … `critical`, default `info`; `LOG_LEVEL` is read when it is unset) and
/// `IAP_LOG_FORMAT` (`text`, the default, or `json`: one object a line). Logs go to stderr.
package struct LogSettings: Sendable, Equatable {
    package var level: Logger.Level
    package var json: Bool

    package init(level: Logger.Level, json: Bool) {
        self.level = level
        self.json = json
    }

    package init(environment: [String: String]) throws(ConfigurationError) {
        var environment = environment
        if environment[Settings.logLevel.variable, default: ""].isEmpty, let fallback = environment["LOG_LEVEL"] {
            environment[Settings.logLevel.variable] = fallback
        }
        let source = SettingSource(environment: environment)
        level = Logger.Level(rawValue: try source.choice(Settings.logLevel))!
        json = try source.choice(Settings.logFormat) == "json"
    }
}

/// The process's logger; the logging system is set up once per process. A bad setting stops the
/// process with exit code 2 and one line naming it.
package func bootstrapLogging(label: String) -> Logger {
    let settings: LogSettings
    do {
        settings = try LogSettings(environment: ProcessInfo.processInfo.environment)
    } catch {
        failConfiguration(error)
    }
    bootstrapOnce.withLockedValue { done in
        guard !done else { return }
        done = true
        if settings.json {
            LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        } else {
            LoggingSystem.bootstrap { TextLogHandler(label: $0) }
        }
    }
    var logger = Logger(label: label)
    logger.logLevel = settings.level
    return logger
}

private let bootstrapOnce = NIOLockedValueBox(false)
