import Foundation

/// Wall-clock milliseconds, the unit of every timestamp and score in Redis.
package func currentTimeMs() -> Int64 {
    Int64(Date().timeIntervalSince1970 * 1000)
}
