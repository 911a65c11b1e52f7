/// A JSON document as plain values: what the pipeline's hot path reads and writes instead of
/// Foundation's `Codable` coders, whose generic machinery cost a third of a stage's CPU.
///
/// Numbers keep the text they were written with (`"42"`, `"-1.5e3"`), so integers of any size
/// round-trip exactly; read them with `int`, `int64` or `lenientString`.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    public var array: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    public var object: JSONObject? {
        if case .object(let members) = self { return members }
        return nil
    }

    public var bool: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// An integer written as a number (not as a string).
    public var int64: Int64? {
        if case .number(let text) = self { return Int64(text) }
        return nil
    }

    public var int: Int? {
        if case .number(let text) = self { return Int(text) }
        return nil
    }

    /// A value Apple may send as a string or as a number, read as a string; a flag reads `1`/`0`.
    public var lenientString: String? {
        switch self {
        case .string(let text): return text
        case .number(let text): return text
        case .bool(let flag): return flag ? "1" : "0"
        default: return nil
        }
    }

    /// An object of the members whose value is present: `nil` values are left out, as
    /// `Codable`'s `encodeIfPresent` leaves them out.
    public static func members(_ pairs: KeyValuePairs<String, JSONValue?>) -> JSONValue {
        var members = JSONObject(minimumCapacity: pairs.count)
        for (key, value) in pairs {
            if let value { members[key] = value }
        }
        return .object(members)
    }

    public static func int(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }

    /// An object of a dictionary's members (in canonical order).
    public static func object(_ dictionary: [String: JSONValue]) -> JSONValue { .object(JSONObject(dictionary)) }
}
