/// Reads a JSON object straight into a model's fields, without a `JSONValue` tree: each member's
/// name is handed over as its bytes (`JSONName`) with the cursor on its value, which the reader
/// takes as the type it expects (`string`, `int64`, an object's `members`, an array's `items`...)
/// or leaves, and then it is skipped.
///
/// Why: a stage read every job as a tree, then looked each field up in it: for a grant job about
/// 31 thousand instructions to build the tree (an array of members an object, each value boxed)
/// and 32 thousand to look its fifty-odd fields up and type them (callgrind). Here each value is
/// read once, into the field it is for.
///
/// The rules are those of reading a tree with `JSONValue`'s member functions, as `Codable` reads:
/// `null` reads as absent (`nil`), a value of another type than the one asked for is a
/// `JSONShapeError` naming the member, and a later member of a name replaces an earlier one (the
/// reader assigns it again). The text must be JSON (RFC 8259), as `JSONValue(parsing:)` requires,
/// up to the same depth; a text that is not is a `JSONShapeError` too (its member `document`),
/// so a model's reader has one error type.
public struct JSONCursor {
    var reader: JSONReader
    /// How deep the value the cursor is on lies (the document is at 0).
    var depth: Int

    init(_ reader: JSONReader, depth: Int) {
        self.reader = reader
        self.depth = depth
    }

    /// Reads the JSON document `bytes` hold: `body` gets the cursor on it (valid during the call
    /// only) and reads it; anything after the document is an error.
    public static func read<Value>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ body: (inout JSONCursor) throws(JSONShapeError) -> Value
    ) throws(JSONShapeError) -> Value {
        var cursor = JSONCursor(JSONReader(bytes), depth: 0)
        try cursor.parsing { reader throws(JSONParseError) in reader.skipWhitespace() }
        let start = cursor.reader.index
        let value = try body(&cursor)
        if cursor.reader.index == start { _ = try cursor.value() }
        try cursor.parsing { reader throws(JSONParseError) in
            reader.skipWhitespace()
            guard reader.index == reader.bytes.count else { throw reader.error("text after the document") }
        }
        return value
    }

    /// Reads the JSON document `text` holds (see `read(_:_:)` for bytes).
    @inlinable
    public static func read<Value>(
        _ text: String, _ body: (inout JSONCursor) throws(JSONShapeError) -> Value
    ) throws(JSONShapeError) -> Value {
        var text = text
        // `withUTF8` rethrows untyped errors: carry the typed one out (`TypedFailure`).
        var failure = TypedFailure<JSONShapeError>()
        let value = text.withUTF8 { bytes in failure.catching { () throws(JSONShapeError) in try read(bytes, body) } }
        return try failure.value(value)
    }

    /// The byte the value starts with (the cursor is on it, past any whitespace).
    private var first: UInt8? {
        reader.index < reader.bytes.count ? reader.bytes[reader.index] : nil
    }

    /// Runs `step` on the reader, a parse error made the document's shape error.
    private mutating func parsing<T>(_ step: (inout JSONReader) throws(JSONParseError) -> T) throws(JSONShapeError) -> T {
        do {
            return try step(&reader)
        } catch {
            throw JSONShapeError(member: "document", reason: error.description)
        }
    }

    /// Reads `null` if the value is `null` (true), else reads nothing (false): for a member that
    /// is absent when `null`, read as a model that would refuse it.
    public mutating func readNull() throws(JSONShapeError) -> Bool {
        guard first == UInt8(ascii: "n") else { return false }
        try parsing { reader throws(JSONParseError) in try reader.literal("null") }
        return true
    }

    private func wrongType(_ member: String, _ reason: String) -> JSONShapeError {
        JSONShapeError(member: member, reason: reason)
    }

    /// A string, or `nil` for `null`.
    public mutating func string(asMember member: String) throws(JSONShapeError) -> String? {
        if try readNull() { return nil }
        guard first == UInt8(ascii: "\"") else { throw wrongType(member, "not a string") }
        return try parsing { reader throws(JSONParseError) in try reader.string() }
    }

    /// A string or a number, read as a string (a flag reads `1`/`0`); `nil` for `null`: what
    /// `JSONValue.lenientString` reads, for the ids Apple has sent both ways.
    public mutating func lenientString(asMember member: String) throws(JSONShapeError) -> String? {
        switch first ?? 0 {
        case UInt8(ascii: "\""): return try parsing { reader throws(JSONParseError) in try reader.string() }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parsing { reader throws(JSONParseError) in try reader.number() }
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return try bool(asMember: member).map { $0 ? "1" : "0" }
        case UInt8(ascii: "n"):
            _ = try readNull()
            return nil
        default: throw wrongType(member, "not a string or a number")
        }
    }

    /// An integer written as a number (not as a string), or `nil` for `null`.
    public mutating func int64(asMember member: String) throws(JSONShapeError) -> Int64? {
        if try readNull() { return nil }
        guard let byte = first, byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
            throw wrongType(member, "not an integer")
        }
        let digits = try parsing { reader throws(JSONParseError) in try reader.numberRange() }
        guard let value = Self.integer(UnsafeBufferPointer(rebasing: reader.bytes[digits])) else {
            throw wrongType(member, "not an integer")
        }
        return value
    }

    public mutating func int(asMember member: String) throws(JSONShapeError) -> Int? {
        guard let number = try int64(asMember: member) else { return nil }
        guard let exact = Int(exactly: number) else { throw wrongType(member, "out of range") }
        return exact
    }

    public mutating func bool(asMember member: String) throws(JSONShapeError) -> Bool? {
        switch first ?? 0 {
        case UInt8(ascii: "t"):
            try parsing { reader throws(JSONParseError) in try reader.literal("true") }
            return true
        case UInt8(ascii: "f"):
            try parsing { reader throws(JSONParseError) in try reader.literal("false") }
            return false
        default:
            if try readNull() { return nil }
            throw wrongType(member, "not a boolean")
        }
    }

    /// The value as a tree (for a member read by a model that reads trees).
    public mutating func value() throws(JSONShapeError) -> JSONValue {
        let depth = depth
        return try parsing { reader throws(JSONParseError) in try reader.value(depth: depth) }
    }

    /// An object, or `nil` for `null`: the value as a tree (`objectIfPresent`'s rule).
    public mutating func object(asMember member: String) throws(JSONShapeError) -> JSONValue? {
        if try readNull() { return nil }
        guard first == UInt8(ascii: "{") else { throw wrongType(member, "not an object") }
        return try value()
    }

    /// An object: `body` gets each member with the cursor on its value (what it does not read is
    /// skipped). False, and `body` not called, for `null`.
    public mutating func members(
        asMember member: String, _ body: (JSONName, inout JSONCursor) throws(JSONShapeError) -> Void
    ) throws(JSONShapeError) -> Bool {
        guard let entered = try enter(UInt8(ascii: "{"), UInt8(ascii: "}"), member: member, "not an object") else { return false }
        depth += 1
        defer { depth -= 1 }
        guard entered else { return true }
        repeat {
            try parsing { reader throws(JSONParseError) in reader.skipWhitespace() }
            guard first == UInt8(ascii: "\"") else { throw JSONShapeError(member: "document", reason: reader.error("expected a member name").description) }
            let name = try parsing { reader throws(JSONParseError) in
                let name = try reader.memberName()
                reader.skipWhitespace()
                guard reader.index < reader.bytes.count, reader.bytes[reader.index] == UInt8(ascii: ":") else { throw reader.error("expected ':'") }
                reader.index += 1
                reader.skipWhitespace()
                return name
            }
            try hand(name, to: body)
        } while try another(UInt8(ascii: "}"))
        return true
    }

    /// Hands `body` the member `name` with the cursor on its value, then skips the value if
    /// `body` did not read it.
    private mutating func hand(
        _ name: JSONReader.MemberName, to body: (JSONName, inout JSONCursor) throws(JSONShapeError) -> Void
    ) throws(JSONShapeError) {
        let start = reader.index
        switch name {
        case .inPlace(let range): try body(JSONName(UnsafeBufferPointer(rebasing: reader.bytes[range])), &self)
        case .read(let text):
            var failure = TypedFailure<JSONShapeError>()
            let done: Void? = Array(text.utf8).withUnsafeBufferPointer { name in
                failure.catching { () throws(JSONShapeError) in try body(JSONName(name), &self) }
            }
            try failure.value(done)
        }
        if reader.index == start { _ = try value() }
    }

    /// An array: `body` gets the cursor on each item in turn (what it does not read is skipped).
    /// False, and `body` not called, for `null`.
    public mutating func items(
        asMember member: String, _ body: (inout JSONCursor) throws(JSONShapeError) -> Void
    ) throws(JSONShapeError) -> Bool {
        guard let entered = try enter(UInt8(ascii: "["), UInt8(ascii: "]"), member: member, "not an array") else { return false }
        depth += 1
        defer { depth -= 1 }
        guard entered else { return true }
        repeat {
            try parsing { reader throws(JSONParseError) in reader.skipWhitespace() }
            let start = reader.index
            try body(&self)
            if reader.index == start { _ = try value() }
        } while try another(UInt8(ascii: "]"))
        return true
    }

    /// Steps into the object or array (`open` … `close`) the cursor is on: `nil` for `null`, else
    /// whether anything is in it (false: it was empty, and the cursor is past it). A value of
    /// another type is `wrong`; one nested deeper than a tree is read is refused.
    private mutating func enter(
        _ open: UInt8, _ close: UInt8, member: String, _ wrong: String
    ) throws(JSONShapeError) -> Bool? {
        if try readNull() { return nil }
        guard first == open else { throw wrongType(member, wrong) }
        guard depth + 1 <= JSONValue.maxDepth else {
            throw JSONShapeError(member: "document", reason: reader.error("nested too deep").description)
        }
        reader.index += 1
        try parsing { reader throws(JSONParseError) in reader.skipWhitespace() }
        guard first == close else { return true }
        reader.index += 1
        return false
    }

    /// After a member or an item: past its comma (true: another follows), or past `close` (false).
    private mutating func another(_ close: UInt8) throws(JSONShapeError) -> Bool {
        try parsing { reader throws(JSONParseError) in
            reader.skipWhitespace()
            guard reader.index < reader.bytes.count else { throw reader.error("unexpected end") }
            let byte = reader.bytes[reader.index]
            reader.index += 1
            if byte == UInt8(ascii: ",") { return true }
            guard byte == close else {
                throw JSONParseError(offset: reader.index - 1, reason: "expected ',' or '\(Character(Unicode.Scalar(close)))'")
            }
            return false
        }
    }

    /// The integer `digits` (a JSON number) write, if it is one that fits in an `Int64`: no
    /// fraction, no exponent (as `Int64(String)` reads them, without making the string).
    static func integer(_ digits: UnsafeBufferPointer<UInt8>) -> Int64? {
        var place = 0
        let negative = digits.first == UInt8(ascii: "-")
        if negative { place = 1 }
        guard place < digits.count else { return nil }
        var value: Int64 = 0
        while place < digits.count {
            let byte = digits[place]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int64(byte &- UInt8(ascii: "0"))
            // Accumulated as a negative number, whose range reaches Int64.min.
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, under) = times.subtractingReportingOverflow(digit)
            guard !overflow, !under else { return nil }
            value = next
            place += 1
        }
        if negative { return value }
        return value == .min ? nil : -value
    }
}
