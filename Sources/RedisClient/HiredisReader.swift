import CHiredis

/// hiredis's reply parser (`redisReader`): bytes go in as they arrive, whole replies come out.
/// Not thread-safe: one per connection, used only on that connection's event loop.
final class HiredisReader {
    private let reader: UnsafeMutablePointer<redisReader>

    init() {
        guard let reader = redisReaderCreate() else { fatalError("hiredis cannot allocate a reader") }
        self.reader = reader
    }

    deinit {
        redisReaderFree(reader)
    }

    /// Hands hiredis the bytes read from the socket; false when the reader is in an error state.
    func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return true }
        return redisReaderFeed(reader, base.assumingMemoryBound(to: CChar.self), bytes.count) == REDIS_OK
    }

    /// The next complete reply, `nil` when more bytes are needed; throws on a protocol error.
    func next() throws(RedisError) -> RedisReply? {
        var raw: UnsafeMutableRawPointer?
        guard redisReaderGetReply(reader, &raw) == REDIS_OK else {
            throw .connectionLost("protocol error: \(errorMessage)")
        }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return Self.decode(raw.assumingMemoryBound(to: redisReply.self))
    }

    private var errorMessage: String {
        withUnsafeBytes(of: reader.pointee.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    static func decode(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STRING:
            return .bulk(bytes(value.str, value.len))
        case REDIS_REPLY_STATUS:
            return .status(String(decoding: bytes(value.str, value.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: bytes(value.str, value.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(value.integer))
        case REDIS_REPLY_NIL:
            return .null
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            items.reserveCapacity(Int(value.elements))
            for index in 0..<Int(value.elements) {
                if let element = value.element[index] { items.append(decode(element)) } else { items.append(.null) }
            }
            return .array(items)
        default:
            return .error("unsupported reply type \(value.type)")
        }
    }

    private static func bytes(_ pointer: UnsafeMutablePointer<CChar>?, _ length: Int) -> [UInt8] {
        guard let pointer, length > 0 else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }
}
