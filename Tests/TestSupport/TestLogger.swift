import Foundation
import Logging

/// The tests' logger: quiet unless `IAP_TEST_LOG=1` (then errors).
public let testLogger: Logger = {
    var logger = Logger(label: "test")
    logger.logLevel = ProcessInfo.processInfo.environment["IAP_TEST_LOG"] == "1" ? .error : .critical
    return logger
}()
