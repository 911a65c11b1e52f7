import PlainJSON

/// The `KEYS` of one call: the script's fixed keys first, then those its arguments name by index
/// (a purchase's claim, another user's lifetime set, a job's ticket…), each declared once.
///
/// Keys are told apart by their bytes, as Redis tells them (not by `String`'s Unicode
/// equivalence, under which two different keys could share one place).
package struct DeclaredKeys: Sendable {
    package private(set) var list: [String]
    /// Each key's last eight bytes and its length, folded into one integer (`fingerprint(of:)`):
    /// a look along the list compares these and the bytes only where one matches. Keys of one
    /// call share long prefixes (`iap:{bucket}:…`) and differ at the end; comparing them as
    /// strings was 2.6 % of a granter's instructions (135 lookups a job, callgrind).
    private var prints: [UInt64]
    /// The keys' indexes once there are more than `linearLimit`: a long batch stays linear in its keys.
    private var indexes: [Name: Int]?

    private static let linearLimit = 48

    /// The fixed keys keep their places (a script reads them as `KEYS[1]`, `KEYS[2]`…), a key
    /// given twice too; a key named later is found at its first place.
    package init(_ fixed: [String]) {
        list = fixed
        list.reserveCapacity(fixed.count + 16)
        prints = fixed.map(Self.fingerprint(of:))
        prints.reserveCapacity(fixed.count + 16)
        if fixed.count > Self.linearLimit { indexes = Self.firstPlaces(of: fixed) }
    }

    private static func firstPlaces(of keys: [String]) -> [Name: Int] {
        var places: [Name: Int] = [:]
        places.reserveCapacity(keys.count * 2)
        for (offset, key) in keys.enumerated() where places[Name(key: key)] == nil { places[Name(key: key)] = offset + 1 }
        return places
    }

    /// The key's index in `KEYS` (Lua counts from 1), declaring it when it is new.
    package mutating func index(of key: String) -> Int {
        let fingerprint = Self.fingerprint(of: key)
        if let indexes {
            if let index = indexes[Name(key: key)] { return index }
        } else {
            for offset in prints.indices where prints[offset] == fingerprint && UTF8Bytes.equal(list[offset], key) {
                return offset + 1
            }
        }
        list.append(key)
        prints.append(fingerprint)
        if indexes != nil {
            indexes![Name(key: key)] = list.count
        } else if list.count > Self.linearLimit {
            indexes = Self.firstPlaces(of: list)
        }
        return list.count
    }

    /// The last eight bytes (fewer, zero-filled, for a shorter key) with the length: equal keys
    /// have equal fingerprints.
    static func fingerprint(of key: String) -> UInt64 {
        let fast: UInt64? = key.utf8.withContiguousStorageIfAvailable { bytes in
            var tail: UInt64 = 0
            for byte in bytes[max(0, bytes.count - 8)...] { tail = tail << 8 | UInt64(byte) }
            return tail ^ UInt64(truncatingIfNeeded: bytes.count) &* 0x9E37_79B9_7F4A_7C15
        }
        if let fast { return fast }
        var copy = key
        copy.makeContiguousUTF8()
        return fingerprint(of: copy)
    }

    /// A key as its bytes, for the index of a long list.
    struct Name: Hashable, Sendable {
        let key: String

        func hash(into hasher: inout Hasher) {
            hasher.combine(key.utf8.count)
            for byte in key.utf8 { hasher.combine(byte) }
        }

        static func == (a: Name, b: Name) -> Bool { UTF8Bytes.equal(a.key, b.key) }
    }
}
