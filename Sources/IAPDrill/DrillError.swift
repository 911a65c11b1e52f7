/// Why the drill itself could not go on (not a finding about the pipeline).
public struct DrillError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
