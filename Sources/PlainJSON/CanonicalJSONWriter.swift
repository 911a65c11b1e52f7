#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Canonical JSON text (the bytes `JSONValue.canonicalText` gives) written straight from values,
/// without a `JSONValue` tree: members sorted by name (byte order), no whitespace.
///
/// Why: a stage wrote its next job by building the job as a tree (each number a `String`, each
/// member placed in an object) and then writing the tree: about 50 thousand instructions of the
/// deduper's 370 a job (callgrind). Here each member goes into the bytes as it is written; when an
/// object closes, its members are put in order if they are not already (one copy of the object's
/// bytes), so a caller may write them in any order and the text is canonical all the same.
/// Writing them in order (as the job types do, where they can) costs no copy.
///
/// Names are literals (`StaticString`) needing no escape; each name is written once in an object.
public struct CanonicalJSONWriter {
    public private(set) var bytes: [UInt8] = []
    /// The members of the objects open now, the innermost's last.
    private var members: [Member] = []
    /// The objects and arrays open now, the innermost last.
    private var open: [Open] = []
    /// A value has been written in the innermost open object or array: the next one needs a comma.
    private var afterValue = false

    /// A member's place in `bytes`: from its name's opening quote to the end of its value.
    private struct Member {
        var start: Int
        var end: Int
        let nameLength: Int
        /// The name's first eight bytes, the first the highest (as `JSONObject` keeps them).
        let prefix: UInt64
    }

    private struct Open {
        /// Where the object's first member starts (just after `{`); nil for an array.
        let objectStart: Int?
        /// Its first member's index in `members`.
        let firstMember: Int
    }

    public init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
        members.reserveCapacity(32)
        open.reserveCapacity(8)
    }

    /// What was written, as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func openObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        open.append(Open(objectStart: bytes.count, firstMember: members.count))
        afterValue = false
    }

    public mutating func closeObject() {
        guard let object = open.popLast(), let start = object.objectStart else {
            preconditionFailure("closeObject() without an open object")
        }
        endLastMember(of: object)
        putInOrder(members[object.firstMember...], from: start)
        members.removeSubrange(object.firstMember...)
        bytes.append(UInt8(ascii: "}"))
        afterValue = true
    }

    public mutating func openArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        open.append(Open(objectStart: nil, firstMember: members.count))
        afterValue = false
    }

    public mutating func closeArray() {
        guard let array = open.popLast(), array.objectStart == nil else { preconditionFailure("closeArray() without an open array") }
        bytes.append(UInt8(ascii: "]"))
        afterValue = true
    }

    /// A member's name; its value is what is written next.
    public mutating func name(_ name: StaticString) {
        guard let object = open.last, object.objectStart != nil else { preconditionFailure("a name outside an object") }
        endLastMember(of: object)
        separate()
        let start = bytes.count
        bytes.append(UInt8(ascii: "\""))
        let prefix = name.withUTF8Buffer { utf8 in
            bytes.append(contentsOf: utf8)
            return JSONObject.Member.prefix(of: utf8)
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        members.append(Member(start: start, end: -1, nameLength: name.utf8CodeUnitCount, prefix: prefix))
        afterValue = false
    }

    /// A string value (an array's item, or the value of the name just written).
    public mutating func string(_ text: String) {
        separate()
        JSONValue.write(text, into: &bytes)
        afterValue = true
    }

    /// A number.
    public mutating func int(_ value: Int64) {
        separate()
        JSONValue.writeDecimal(value, into: &bytes)
        afterValue = true
    }

    public mutating func int(_ value: Int) { int(Int64(value)) }

    public mutating func bool(_ flag: Bool) {
        separate()
        bytes.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        afterValue = true
    }

    /// A value of a tree, in its canonical text.
    public mutating func value(_ value: JSONValue) {
        separate()
        value.write(into: &bytes)
        afterValue = true
    }

    /// A string member; none when `nil`.
    public mutating func member(_ name: StaticString, _ text: String?) {
        guard let text else { return }
        self.name(name)
        string(text)
    }

    /// A number member; none when `nil`.
    public mutating func member(_ name: StaticString, int value: Int?) {
        guard let value else { return }
        self.name(name)
        int(value)
    }

    /// A number member; none when `nil`.
    public mutating func member(_ name: StaticString, int64 value: Int64?) {
        guard let value else { return }
        self.name(name)
        int(value)
    }

    /// A `true` or `false` member; none when `nil`.
    public mutating func member(_ name: StaticString, bool flag: Bool?) {
        guard let flag else { return }
        self.name(name)
        bool(flag)
    }

    /// An array of strings; none when `nil`.
    public mutating func member(_ name: StaticString, strings: [String]?) {
        guard let strings else { return }
        self.name(name)
        openArray()
        for text in strings { string(text) }
        closeArray()
    }

    /// A member written from a tree; none when `nil`.
    public mutating func member(_ name: StaticString, value: JSONValue?) {
        guard let value else { return }
        self.name(name)
        self.value(value)
    }

    private mutating func separate() {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func endLastMember(of object: Open) {
        if members.count > object.firstMember, members[members.count - 1].end < 0 { members[members.count - 1].end = bytes.count }
    }

    /// The object's members (from `start` to the end of `bytes`) rewritten in name order, unless
    /// they are in it already.
    private mutating func putInOrder(_ written: ArraySlice<Member>, from start: Int) {
        guard !isInOrder(written) else { return }
        let sorted = written.sorted { precedes($0, $1) }
        var ordered: [UInt8] = []
        ordered.reserveCapacity(bytes.count - start)
        for (place, member) in sorted.enumerated() {
            if place > 0 { ordered.append(UInt8(ascii: ",")) }
            ordered.append(contentsOf: bytes[member.start..<member.end])
        }
        bytes.replaceSubrange(start..., with: ordered)
    }

    private func isInOrder(_ written: ArraySlice<Member>) -> Bool {
        var previous: Member?
        for member in written {
            if let previous, !precedes(previous, member) {
                assert(!sameName(previous, member), "a member written twice in one object")
                return false
            }
            previous = member
        }
        return true
    }

    /// Byte order of two members' names, as `JSONObject` orders them.
    private func precedes(_ a: Member, _ b: Member) -> Bool {
        if a.prefix != b.prefix { return a.prefix < b.prefix }
        if a.nameLength <= 8, b.nameLength <= 8 { return a.nameLength < b.nameLength }
        let common = min(a.nameLength, b.nameLength)
        let order = bytes.withUnsafeBufferPointer { buffer in
            memcmp(buffer.baseAddress! + a.start + 1, buffer.baseAddress! + b.start + 1, common)
        }
        return order != 0 ? order < 0 : a.nameLength < b.nameLength
    }

    private func sameName(_ a: Member, _ b: Member) -> Bool {
        a.nameLength == b.nameLength && !precedes(a, b) && !precedes(b, a)
    }
}

extension CanonicalJSONWriter {
    /// The canonical text of what `write` writes.
    public static func text(_ write: (inout CanonicalJSONWriter) -> Void) -> String {
        var writer = CanonicalJSONWriter()
        write(&writer)
        return writer.text
    }

    /// What `write` writes, read back as a tree: for the callers that want a value, off the hot
    /// paths (it is parsed from the text; the text is this writer's own, so it always parses).
    public static func value(_ write: (inout CanonicalJSONWriter) -> Void) -> JSONValue {
        var writer = CanonicalJSONWriter()
        write(&writer)
        do {
            return try JSONValue(parsing: writer.bytes)
        } catch {
            preconditionFailure("CanonicalJSONWriter wrote text that does not parse: \(error)")
        }
    }
}
