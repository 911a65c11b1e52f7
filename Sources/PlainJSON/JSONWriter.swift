/// JSON written as it goes, members in the order they are written: for a script's arguments,
/// which Redis's cjson reads in any order. Building a `JSONValue` tree first and writing it in
/// canonical order cost the grant step about 85 thousand instructions a job (each member's name
/// hashed into an object, then the names sorted); this writes the same members straight into bytes.
///
/// Where bytes must be canonical (a job's identify it in Redis lists), use `CanonicalJSONWriter`
/// (or a `JSONValue`'s `canonicalText`) instead. A name given as a literal (`StaticString`) is
/// written as it is; one given as a `String` (`key`) is escaped like any string.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []
    /// A value has been written in the innermost open object or array: the next one needs a comma.
    private var afterValue = false

    public init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    /// What was written, as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func openObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        afterValue = false
    }

    public mutating func closeObject() {
        bytes.append(UInt8(ascii: "}"))
        afterValue = true
    }

    public mutating func openArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        afterValue = false
    }

    public mutating func closeArray() {
        bytes.append(UInt8(ascii: "]"))
        afterValue = true
    }

    /// A member's name; its value is what is written next.
    public mutating func name(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))  // byte by byte: an array literal here was an allocation a member
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    /// A member's name the caller did not write in the source (a user id), escaped.
    public mutating func key(_ name: String) {
        separate()
        JSONValue.write(name, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    /// A string value (an array's item, or the value of the name just written).
    public mutating func string(_ text: String) {
        separate()
        JSONValue.write(text, into: &bytes)
        afterValue = true
    }

    public mutating func int(_ value: Int) {
        separate()
        JSONValue.writeDecimal(Int64(value), into: &bytes)
        afterValue = true
    }

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

    /// `true`; none when `false`.
    public mutating func member(_ name: StaticString, flag: Bool) {
        guard flag else { return }
        self.name(name)
        bytes.append(contentsOf: "true".utf8)
        afterValue = true
    }

    /// A member written from a value; none when `nil`.
    public mutating func member(_ name: StaticString, value: JSONValue?) {
        guard let value else { return }
        self.name(name)
        self.value(value)
    }

    /// An object of number members whose names are the caller's literals, in the order given
    /// (a name given twice is written twice: give each once).
    public mutating func member(_ name: StaticString, fields: [(name: StaticString, value: Int)]) {
        self.name(name)
        openObject()
        for field in fields {
            self.name(field.name)
            int(field.value)
        }
        closeObject()
    }

    private mutating func separate() {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
    }
}
