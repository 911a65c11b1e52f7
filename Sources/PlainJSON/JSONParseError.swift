/// Why a text is not JSON, and the byte offset where reading stopped.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var reason: String

    public var description: String { "not JSON at byte \(offset): \(reason)" }
}
