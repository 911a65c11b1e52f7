/// Reading an object's members the way `Codable` does: an absent or `null` optional is `nil`,
/// a present member of the wrong type is an error.
extension JSONValue {
    private func member(_ key: String) throws(JSONShapeError) -> JSONValue? {
        guard case .object(let members) = self else { throw JSONShapeError(member: key, reason: "not in an object") }
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    /// This value read as the member `name` (a member already taken out of its object, as
    /// `forEachMember` hands them over): `null` is `nil`, another type an error naming `name`.
    public func string(asMember name: String) throws(JSONShapeError) -> String? {
        switch self {
        case .null: return nil
        case .string(let text): return text
        default: throw JSONShapeError(member: name, reason: "not a string")
        }
    }

    public func lenientString(asMember name: String) throws(JSONShapeError) -> String? {
        if self == .null { return nil }
        guard let text = lenientString else { throw JSONShapeError(member: name, reason: "not a string or a number") }
        return text
    }

    public func bool(asMember name: String) throws(JSONShapeError) -> Bool? {
        switch self {
        case .null: return nil
        case .bool(let flag): return flag
        default: throw JSONShapeError(member: name, reason: "not a boolean")
        }
    }

    public func int64(asMember name: String) throws(JSONShapeError) -> Int64? {
        if self == .null { return nil }
        guard let number = int64 else { throw JSONShapeError(member: name, reason: "not an integer") }
        return number
    }

    public func int(asMember name: String) throws(JSONShapeError) -> Int? {
        guard let number = try int64(asMember: name) else { return nil }
        guard let exact = Int(exactly: number) else { throw JSONShapeError(member: name, reason: "out of range") }
        return exact
    }

    public func string(_ key: String) throws(JSONShapeError) -> String {
        guard let text = try stringIfPresent(key) else { throw JSONShapeError(member: key, reason: "missing") }
        return text
    }

    public func stringIfPresent(_ key: String) throws(JSONShapeError) -> String? {
        try member(key)?.string(asMember: key)
    }

    /// A string or a number, read as a string (Apple has sent ids both ways).
    public func lenientString(_ key: String) throws(JSONShapeError) -> String {
        guard let text = try lenientStringIfPresent(key) else { throw JSONShapeError(member: key, reason: "missing") }
        return text
    }

    public func lenientStringIfPresent(_ key: String) throws(JSONShapeError) -> String? {
        try member(key)?.lenientString(asMember: key)
    }

    public func int64(_ key: String) throws(JSONShapeError) -> Int64 {
        guard let number = try int64IfPresent(key) else { throw JSONShapeError(member: key, reason: "missing") }
        return number
    }

    public func int64IfPresent(_ key: String) throws(JSONShapeError) -> Int64? {
        try member(key)?.int64(asMember: key)
    }

    public func int(_ key: String) throws(JSONShapeError) -> Int {
        guard let number = Int(exactly: try int64(key)) else { throw JSONShapeError(member: key, reason: "out of range") }
        return number
    }

    public func intIfPresent(_ key: String) throws(JSONShapeError) -> Int? {
        try member(key)?.int(asMember: key)
    }

    public func boolIfPresent(_ key: String) throws(JSONShapeError) -> Bool? {
        try member(key)?.bool(asMember: key)
    }

    public func arrayIfPresent(_ key: String) throws(JSONShapeError) -> [JSONValue]? {
        guard let value = try member(key) else { return nil }
        guard case .array(let items) = value else { throw JSONShapeError(member: key, reason: "not an array") }
        return items
    }

    public func objectIfPresent(_ key: String) throws(JSONShapeError) -> JSONValue? {
        guard let value = try member(key) else { return nil }
        guard case .object = value else { throw JSONShapeError(member: key, reason: "not an object") }
        return value
    }

    public func object(_ key: String) throws(JSONShapeError) -> JSONValue {
        guard let value = try objectIfPresent(key) else { throw JSONShapeError(member: key, reason: "missing") }
        return value
    }
}

extension Optional where Wrapped == String {
    /// The member's JSON value, absent when `nil`.
    public var json: JSONValue? { map(JSONValue.string) }
}
