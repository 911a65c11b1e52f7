import Foundation
import Logging
import NIOConcurrencyHelpers

/// Logs go to stderr at `LOG_LEVEL` (default info), once per process.
public func bootstrapLogging(label: String) -> Logger {
    _ = loggingBootstrapped
    var logger = Logger(label: label)
    logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
    return logger
}

private let loggingBootstrapped: Void = {
    LoggingSystem.bootstrap(StreamLogHandler.standardError)
}()
