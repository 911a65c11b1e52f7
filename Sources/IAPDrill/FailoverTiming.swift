/// How long one forced failover kept the pipeline from granting.
package struct FailoverTiming: Codable, Sendable {
    /// From the kill until every sentinel named a new primary that says it is one.
    package var promotedSeconds: Double
    /// From the kill until the first grant after it (nil: no purchase was granted after the kill).
    package var firstGrantSeconds: Double?
    /// From the kill until the killed node was back as a replica and every replica in sync.
    package var wholeSeconds: Double
}
