/// Why the drill itself could not go on (not a finding about the pipeline).
package struct DrillError: Error, CustomStringConvertible, Sendable {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}
