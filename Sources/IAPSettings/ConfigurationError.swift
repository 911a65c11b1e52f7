/// A setting that is missing or malformed: the process stops at start with one line naming it.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let variable: String
    public let problem: String

    public init(_ variable: String, _ problem: String) {
        self.variable = variable
        self.problem = problem
    }

    public var description: String { "\(variable): \(problem)" }
}
