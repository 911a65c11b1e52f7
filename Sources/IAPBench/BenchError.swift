/// Why the bench could not measure (not a figure about the pipeline).
public struct BenchError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
