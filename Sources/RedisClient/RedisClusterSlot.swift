/// Where a key lives on Redis Cluster: CRC16 (XMODEM) of the key, or of its hash tag — the text
/// between the first `{` and the next `}` when that is not empty — modulo 16384. Keys with one tag
/// share a slot, so one script may touch them all.
public enum RedisClusterSlot {
    public static let count = 16384

    public static func of(_ key: String) -> Int {
        var key = key
        return key.withUTF8 { of(utf8: $0) }
    }

    public static func of(_ key: [UInt8]) -> Int {
        key.withUnsafeBufferPointer { of(utf8: $0) }
    }

    /// Why on the bytes where they lie: the pipeline names a key's slot at every script call (its
    /// `migrationGuard`), and an array of the key's bytes made each time, with a CRC bit by bit, was
    /// about 4 thousand instructions a call (callgrind).
    static func of(utf8 key: UnsafeBufferPointer<UInt8>) -> Int {
        Int(crc16(UnsafeBufferPointer(rebasing: key[hashedRange(key)])) % UInt16(count))
    }

    /// A short hash tag (decimal digits) whose slot is `slot`: `{tag}` puts a key in that slot,
    /// whatever else its name says.
    public static func tag(ofSlot slot: Int) -> String { tags[slot] }

    /// Every slot's shortest decimal tag, found once (about 170,000 CRCs: a few milliseconds).
    private static let tags: [String] = {
        var found = [String?](repeating: nil, count: count)
        var missing = count
        var n = 0
        while missing > 0 {
            let text = String(n)
            let slot = Int(crc16(Array(text.utf8)[...]) % UInt16(count))
            if found[slot] == nil {
                found[slot] = text
                missing -= 1
            }
            n += 1
        }
        return found.map { $0 ?? "" }
    }()

    /// The hash tag of `key` (the text between its first `{` and the next `}`), if it has one.
    public static func hashed(_ key: String) -> String? {
        let bytes = Array(key.utf8)
        let part = hashed(bytes)
        return part.count == bytes.count ? nil : String(decoding: part, as: UTF8.self)
    }

    /// The part of `key` that is hashed: its tag, else all of it.
    static func hashed(_ key: [UInt8]) -> ArraySlice<UInt8> {
        key[key.withUnsafeBufferPointer { hashedRange($0) }]
    }

    /// Where the hashed part of `key` lies: its tag, else all of it.
    static func hashedRange(_ key: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        if let open = key.firstIndex(of: UInt8(ascii: "{")),
           let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
        {
            return (open + 1)..<close
        }
        return 0..<key.count
    }

    /// CRC-16/XMODEM (polynomial 0x1021, initial value 0), as Redis Cluster uses.
    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        bytes.withUnsafeBufferPointer { crc16($0) }
    }

    /// The same, a byte at a time from a table.
    static func crc16(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt16 {
        table.withUnsafeBufferPointer { table in
            var crc: UInt16 = 0
            for byte in bytes { crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)] }
            return crc
        }
    }

    /// Each byte's CRC (the bitwise algorithm on the byte alone): `table[i]`.
    private static let table: [UInt16] = (0..<256).map { byte in
        var crc = UInt16(byte) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }
}

extension RedisCommand {
    /// The key that decides where the command runs on a cluster: `routingKey` when set, else the
    /// command's first key (the first of a script's `KEYS`, the first stream of `XREAD`); `nil`
    /// for a command without keys, which any node may answer.
    public var clusterKey: [UInt8]? {
        if let routingKey { return routingKey }
        return clusterKeyIndex.map { parts[$0].bytes }
    }

    /// The slot of `clusterKey`, read where the key lies (no copy of it); `nil` without one.
    public var clusterSlot: Int? {
        if let routingKey { return RedisClusterSlot.of(routingKey) }
        return clusterKeyIndex.map { parts[$0].withBytes(RedisClusterSlot.of(utf8:)) }
    }

    /// Where the command's first key is among its parts.
    private var clusterKeyIndex: Int? {
        guard parts.count > 1 else { return nil }
        let command = parts[0]
        if command.isWord("EVAL") || command.isWord("EVALSHA") || command.isWord("EVAL_RO") || command.isWord("EVALSHA_RO")
            || command.isWord("FCALL") || command.isWord("FCALL_RO")
        {
            guard parts.count > 3, let count = parts[2].withBytes({ Int(String(decoding: $0, as: UTF8.self)) }), count > 0 else { return nil }
            return 3
        }
        if command.isWord("XREAD") || command.isWord("XREADGROUP") {
            guard let streams = parts.firstIndex(where: { $0.isWord("STREAMS") }), streams + 1 < parts.count else { return nil }
            return streams + 1
        }
        return Self.keyless.contains(where: { command.isWord($0) }) ? nil : 1
    }

    /// Commands whose second argument is not a key.
    private static let keyless: [StaticString] = [
        "PING", "INFO", "WAIT", "SCRIPT", "CLUSTER", "ASKING", "SCAN", "DBSIZE", "FLUSHALL", "FLUSHDB", "CONFIG", "CLIENT",
        "FUNCTION", "PUBLISH", "SUBSCRIBE", "COMMAND", "TIME", "HELLO", "AUTH", "SELECT", "READONLY", "ROLE", "DEBUG", "MULTI", "EXEC",
    ]
}
