/// JSON that parsed but does not have the shape a model needs: a member missing or of the wrong type.
public struct JSONShapeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var member: String
    public var reason: String

    public init(member: String, reason: String) {
        self.member = member
        self.reason = reason
    }

    public var description: String { "member \(member): \(reason)" }
}
