import Foundation
import IAPPipeline
import Logging
import NIOConcurrencyHelpers

/// How every process logs, from the environment only (it is read before anything else):
/// `IAP_LOG_LEVEL` (`trace` … `critical`, default `info`; `LOG_LEVEL` is read when it is unset) and
/// `IAP_LOG_FORMAT` (`text`, the default, or `json`: one object a line). Logs go to stderr.
public struct LogSettings: Sendable, Equatable {
    public var level: Logger.Level
    public var json: Bool

    public init(level: Logger.Level, json: Bool) {
        self.level = level
        self.json = json
    }

    public init(environment: [String: String]) throws(ConfigurationError) {
        let levelText = environment["IAP_LOG_LEVEL"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["LOG_LEVEL"]
        if let levelText, !levelText.isEmpty {
            guard let level = Logger.Level(rawValue: levelText.lowercased()) else {
                throw ConfigurationError("IAP_LOG_LEVEL", "'\(levelText)' is not trace, debug, info, notice, warning, error or critical")
            }
            self.level = level
        } else {
            level = .info
        }
        switch environment["IAP_LOG_FORMAT"]?.lowercased() ?? "" {
        case "", "text": json = false
        case "json": json = true
        case let other: throw ConfigurationError("IAP_LOG_FORMAT", "'\(other)' is not text or json")
        }
    }
}

/// The process's logger; the logging system is set up once per process. A bad setting stops the
/// process with exit code 2 and one line naming it.
public func bootstrapLogging(label: String) -> Logger {
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
            LoggingSystem.bootstrap(StreamLogHandler.standardError)
        }
    }
    var logger = Logger(label: label)
    logger.logLevel = settings.level
    return logger
}

private let bootstrapOnce = NIOLockedValueBox(false)
