/// A JSON object's members in the order they were read or set, each name once.
///
/// Why not a `Dictionary`: a job's object has 10–20 members, and a dictionary hashed every name
/// when the job was read and again when each was looked up, then was sorted to be written (the
/// grant stage spent 12 % of its instructions there). Here each member keeps its name's first
/// eight bytes as one integer beside it, so a name is found by comparing integers along the list
/// and names are put in order mostly by comparing integers too; an object read from canonical
/// text is written without sorting (it is in order already), one built by code is sorted once.
/// Past `indexedCount` members a dictionary of positions is kept as well, so that a large object
/// (a caller's, however many names it holds) is never looked through member by member.
public struct JSONObject: Sendable {
    public typealias Element = (key: String, value: JSONValue)

    /// Where the list stops being enough: an object of more members keeps `positions`.
    static let indexedCount = 32

    /// A member and its name's first eight UTF-8 bytes, the first the highest (zeros after a
    /// shorter name): equal names have equal prefixes, and prefixes order as the names do as far
    /// as they go.
    struct Member: Sendable {
        var key: String
        var value: JSONValue
        let prefix: UInt64
        let length: Int

        init(_ key: String, _ value: JSONValue) {
            let (prefix, length) = Member.prefix(of: key)
            self.init(key, value, prefix: prefix, length: length)
        }

        init(_ key: String, _ value: JSONValue, prefix: UInt64, length: Int) {
            self.key = key
            self.value = value
            self.prefix = prefix
            self.length = length
        }

        static func prefix(of key: String) -> (UInt64, Int) {
            let length = key.utf8.count
            if let prefix = key.utf8.withContiguousStorageIfAvailable(prefix(of:)) { return (prefix, length) }
            return (Array(key.utf8.prefix(8)).withUnsafeBufferPointer(prefix(of:)), length)
        }

        static func prefix(of bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var prefix: UInt64 = 0
            var shift: UInt64 = 56
            for place in 0..<Swift.min(8, bytes.count) {
                prefix |= UInt64(bytes[place]) << shift
                shift &-= 8
            }
            return prefix
        }

        func names(_ key: String, prefix: UInt64, length: Int) -> Bool {
            self.prefix == prefix && self.length == length && (length <= 8 || UTF8Bytes.equal(self.key, key))
        }

        /// Byte order of the names (canonical text).
        static func precedes(_ a: Member, _ b: Member) -> Bool {
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            if a.length <= 8, b.length <= 8 { return a.length < b.length }
            return JSONValue.utf8Precedes(a.key, b.key)
        }
    }

    /// A name as its UTF-8 bytes: names are told apart by their bytes, as canonical text writes
    /// them (not by Unicode equivalence as `String`'s `==` would: "é" written two ways is two names).
    struct Name: Hashable {
        let key: String

        func hash(into hasher: inout Hasher) {
            for byte in key.utf8 { hasher.combine(byte) }
        }

        static func == (a: Name, b: Name) -> Bool { a.key.utf8.elementsEqual(b.key.utf8) }
    }

    private var members: [Member] = []
    private var positions: [Name: Int]?

    public init() {}

    public init(minimumCapacity: Int) {
        members.reserveCapacity(minimumCapacity)
    }

    /// The dictionary's members, in the canonical order (by name, byte order).
    public init(_ dictionary: [String: JSONValue]) {
        members.reserveCapacity(dictionary.count)
        for (key, value) in dictionary { members.append(Member(key, value)) }
        members.sort(by: Member.precedes)
        if members.count > Self.indexedCount { reindex() }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }
    public var values: [JSONValue] { members.map(\.value) }

    /// The members as a dictionary (for a caller that needs one; not on a hot path).
    public var dictionary: [String: JSONValue] {
        Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// The member `key`; setting `nil` removes it, setting another value keeps its place.
    public subscript(key: String) -> JSONValue? {
        get {
            let (prefix, length) = Member.prefix(of: key)
            return position(of: key, prefix: prefix, length: length).map { members[$0].value }
        }
        set {
            let (prefix, length) = Member.prefix(of: key)
            switch (position(of: key, prefix: prefix, length: length), newValue) {
            case (let place?, let value?): members[place].value = value
            case (let place?, nil):
                members.remove(at: place)
                if positions != nil { reindex() }
            case (nil, let value?): append(Member(key, value, prefix: prefix, length: length))
            case (nil, nil): break
            }
        }
    }

    /// Sets the member read as `name`'s bytes (the reader's: its prefix taken from them, not
    /// from a string made first, unless decoding changed them).
    mutating func set(name: UnsafeBufferPointer<UInt8>, _ value: JSONValue) {
        let key = String(decoding: name, as: UTF8.self)
        guard key.utf8.count == name.count else {
            self[key] = value
            return
        }
        let prefix = Member.prefix(of: name)
        if let place = position(of: key, prefix: prefix, length: name.count) {
            members[place].value = value
        } else {
            append(Member(key, value, prefix: prefix, length: name.count))
        }
    }

    public mutating func reserveCapacity(_ capacity: Int) {
        members.reserveCapacity(capacity)
    }

    public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var mapped = self
        for place in mapped.members.indices {
            mapped.members[place].value = try transform(mapped.members[place].value)
        }
        return mapped
    }

    /// The values that `transform` keeps, as a dictionary.
    public func compactMapValues<T>(_ transform: (JSONValue) throws -> T?) rethrows -> [String: T] {
        var kept: [String: T] = [:]
        for member in members {
            if let mapped = try transform(member.value) { kept[member.key] = mapped }
        }
        return kept
    }

    /// These members and `other`'s; where both have a name, `combine` chooses the value.
    public func merging(
        _ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue
    ) rethrows -> JSONObject {
        var merged = self
        for (key, value) in other {
            merged[key] = try merged[key].map { try combine($0, value) } ?? value
        }
        return merged
    }

    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        let value = self[key]
        self[key] = nil
        return value
    }

    /// Adds a member known not to be here yet.
    private mutating func append(_ member: Member) {
        members.append(member)
        if positions != nil {
            positions?[Name(key: member.key)] = members.count - 1
        } else if members.count > Self.indexedCount {
            reindex()
        }
    }

    private func position(of key: String, prefix: UInt64, length: Int) -> Int? {
        if let positions { return positions[Name(key: key)] }
        var place = 0
        while place < members.count {
            if members[place].names(key, prefix: prefix, length: length) { return place }
            place += 1
        }
        return nil
    }

    private mutating func reindex() {
        guard members.count > Self.indexedCount else {
            positions = nil
            return
        }
        var index: [Name: Int] = [:]
        index.reserveCapacity(members.count)
        for (place, member) in members.enumerated() { index[Name(key: member.key)] = place }
        positions = index
    }

    /// Hands over the members in canonical order: as they are when they already are (read from
    /// canonical text), else by sorted positions (moving integers, not members).
    func forEachInCanonicalOrder(_ body: (Member) -> Void) {
        var place = 1
        while place < members.count, Member.precedes(members[place - 1], members[place]) { place += 1 }
        if place >= members.count {
            for member in members { body(member) }
            return
        }
        let order = members.indices.sorted { Member.precedes(members[$0], members[$1]) }
        for place in order { body(members[place]) }
    }
}

extension JSONObject: Sequence {
    public struct Iterator: IteratorProtocol {
        var members: IndexingIterator<[Member]>

        public mutating func next() -> Element? {
            members.next().map { ($0.key, $0.value) }
        }
    }

    public func makeIterator() -> Iterator {
        Iterator(members: members.makeIterator())
    }

    public var underestimatedCount: Int { members.count }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// A later member of the same name replaces an earlier one.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members.reserveCapacity(elements.count)
        for (key, value) in elements { self[key] = value }
    }
}

extension JSONObject: Equatable {
    /// The same names with equal values, in whatever order (as two dictionaries compare).
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }
}
