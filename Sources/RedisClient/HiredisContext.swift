import CHiredis

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The raw hiredis calls, kept apart from the threading so each reads plainly.
/// Every function here blocks: call them only from a connection's own thread.
enum Hiredis {
    typealias Context = UnsafeMutablePointer<redisContext>

    static func connect(_ endpoint: RedisConfiguration.Endpoint, timeoutMs: Int) -> Result<Context, RedisError> {
        let tv = timeval(milliseconds: timeoutMs)
        let context: Context?
        switch endpoint {
        case .tcp(let host, let port): context = redisConnectWithTimeout(host, Int32(port), tv)
        case .unix(let path): context = redisConnectUnixWithTimeout(path, tv)
        }
        guard let context else { return .failure(.connectionFailed("cannot allocate a hiredis context")) }
        if context.pointee.err != 0 {
            let message = errorMessage(context)
            redisFree(context)
            return .failure(.connectionFailed(message))
        }
        return .success(context)
    }

    static func setTimeout(_ context: Context, milliseconds: Int) {
        _ = redisSetTimeout(context, timeval(milliseconds: milliseconds))
    }

    static func enableKeepAlive(_ context: Context) {
        _ = redisEnableKeepAlive(context)
    }

    static func free(_ context: Context) {
        redisFree(context)
    }

    static func errorMessage(_ context: Context) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Sends one command and reads its reply; `nil` means the connection failed (see `errorMessage`).
    static func command(_ context: Context, _ arguments: [[UInt8]]) -> RedisReply? {
        let raw = withArgv(arguments) { argc, argv, lengths in
            redisCommandArgv(context, argc, argv, lengths)
        }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return decode(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// Queues a command in hiredis's output buffer without sending it yet.
    static func append(_ context: Context, _ arguments: [[UInt8]]) -> Bool {
        withArgv(arguments) { argc, argv, lengths in
            redisAppendCommandArgv(context, argc, argv, lengths)
        } == REDIS_OK
    }

    /// Flushes what was appended and reads the next reply; `nil` means the connection failed.
    static func readReply(_ context: Context) -> RedisReply? {
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(context, &raw) == REDIS_OK, let raw else { return nil }
        defer { freeReplyObject(raw) }
        return decode(raw.assumingMemoryBound(to: redisReply.self))
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

    /// Lays the arguments out in one buffer and hands hiredis pointers and lengths into it.
    private static func withArgv<R>(
        _ arguments: [[UInt8]],
        _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R
    ) -> R {
        var flat: [UInt8] = []
        flat.reserveCapacity(arguments.reduce(1) { $0 + $1.count })
        var offsets: [Int] = []
        offsets.reserveCapacity(arguments.count)
        for argument in arguments {
            offsets.append(flat.count)
            flat.append(contentsOf: argument)
        }
        flat.append(0)
        let lengths = arguments.map(\.count)
        return flat.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                let base = chars.baseAddress!
                var argv: [UnsafePointer<CChar>?] = offsets.map { base + $0 }
                return argv.withUnsafeMutableBufferPointer { argvBuffer in
                    lengths.withUnsafeBufferPointer { lengthBuffer in
                        body(Int32(arguments.count), argvBuffer.baseAddress!, lengthBuffer.baseAddress!)
                    }
                }
            }
        }
    }
}

extension timeval {
    init(milliseconds: Int) {
        self.init(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
    }
}
