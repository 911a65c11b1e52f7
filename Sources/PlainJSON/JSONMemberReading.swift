/// A value a model reads its members from, a member at a time: a tree (`JSONValue`) or the text
/// itself (`JSONCursor`). A model read both ways (a transaction: from Apple's answer, a tree, and
/// from a job's text) writes its reader once, generic over this, and the two agree by
/// construction; it is specialised for each in the model's module (the model's public readers
/// are not generic).
public protocol JSONMemberReading {
    mutating func string(asMember member: String) throws(JSONShapeError) -> String?
    mutating func lenientString(asMember member: String) throws(JSONShapeError) -> String?
    mutating func int64(asMember member: String) throws(JSONShapeError) -> Int64?
    mutating func bool(asMember member: String) throws(JSONShapeError) -> Bool?
    /// An object's members, each handed to `body` (false for `null`).
    mutating func members(
        asMember member: String, _ body: (JSONName, inout Self) throws(JSONShapeError) -> Void
    ) throws(JSONShapeError) -> Bool
}

extension JSONCursor: JSONMemberReading {}

extension JSONValue: JSONMemberReading {
    public func members(
        asMember member: String, _ body: (JSONName, inout JSONValue) throws(JSONShapeError) -> Void
    ) throws(JSONShapeError) -> Bool {
        switch self {
        case .null: return false
        case .object(let object):
            for (key, value) in object {
                var value = value
                var key = key
                // `withUTF8` rethrows untyped errors: carry the typed one out (`TypedFailure`).
                var failure = TypedFailure<JSONShapeError>()
                let done: Void? = key.withUTF8 { name in failure.catching { () throws(JSONShapeError) in try body(JSONName(name), &value) } }
                try failure.value(done)
            }
            return true
        default: throw JSONShapeError(member: member, reason: "not an object")
        }
    }
}
