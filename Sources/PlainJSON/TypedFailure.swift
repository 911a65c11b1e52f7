/// A typed error carried out of a closure that rethrows untyped errors (`String.withUTF8`,
/// `Array.withUnsafeBufferPointer`): `catching` runs the body and keeps its error, `value` throws
/// it again as itself.
///
/// Why not `Result { … }.get()`: the runtime looked the `Result`'s generic metadata up on every
/// call (about 500 instructions, six times a grant job as it is read, callgrind).
@usableFromInline
struct TypedFailure<Failure: Error> {
    @usableFromInline var error: Failure?

    @inlinable
    init() { error = nil }

    /// `body`'s value, or `nil` with its error kept.
    @inlinable
    mutating func catching<Value>(_ body: () throws(Failure) -> Value) -> Value? {
        do {
            return try body()
        } catch {
            self.error = error
            return nil
        }
    }

    /// The value `catching` returned, or its error thrown.
    @inlinable
    func value<Value>(_ value: Value?) throws(Failure) -> Value {
        if let error { throw error }
        // `catching` returns nil only when it kept an error.
        return value!
    }
}
