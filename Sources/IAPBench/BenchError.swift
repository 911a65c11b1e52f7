/// Why the bench could not measure (not a figure about the pipeline).
package struct BenchError: Error, CustomStringConvertible, Sendable {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}
