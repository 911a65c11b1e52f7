/// A decoded Redis reply. Bulk strings stay bytes so binary values survive untouched.
public enum RedisReply: Sendable, Equatable {
    case status(String)
    case error(String)
    case integer(Int64)
    case bulk([UInt8])
    case null
    case array([RedisReply])

    /// The reply itself, or `RedisError.server` when it is an error reply: for a caller that
    /// reads a reply a script or command may have refused.
    @discardableResult
    public func checked() throws(RedisError) -> RedisReply {
        if case .error(let message) = self { throw .server(message) }
        return self
    }

    /// The reply as text: bulk strings and statuses; `nil` for anything else.
    public var string: String? {
        switch self {
        case .bulk(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .status(let text): return text
        default: return nil
        }
    }

    public var bytes: [UInt8]? {
        if case .bulk(let bytes) = self { return bytes }
        return nil
    }

    public var int: Int64? {
        switch self {
        case .integer(let value): return value
        case .bulk(let bytes): return Int64(String(decoding: bytes, as: UTF8.self))
        default: return nil
        }
    }

    public var array: [RedisReply]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// Pairs of a flat `[field, value, …]` reply (HGETALL) as a dictionary of strings.
    public var stringDictionary: [String: String] {
        guard let items = array else { return [:] }
        var result: [String: String] = [:]
        var index = 0
        while index + 1 < items.count {
            if let key = items[index].string { result[key] = items[index + 1].string ?? "" }
            index += 2
        }
        return result
    }
}
