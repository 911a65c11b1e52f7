/// The `KEYS` of one call: the script's fixed keys first, then those its arguments name by index
/// (a purchase's claim, another user's lifetime set, a job's ticket…), each declared once.
package struct DeclaredKeys: Sendable {
    package private(set) var list: [String]
    /// The keys' indexes once there are more than `linearLimit`: below that a look along the list
    /// is cheaper than hashing each key (a grant declares about 25; hashing them was 3 % of a
    /// granter's instructions), above it a long batch stays linear in its keys.
    private var indexes: [String: Int]?

    private static let linearLimit = 48

    /// The fixed keys keep their places (a script reads them as `KEYS[1]`, `KEYS[2]`…), a key
    /// given twice too; a key named later is found at its first place.
    package init(_ fixed: [String]) {
        list = fixed
        list.reserveCapacity(fixed.count + 16)
        if fixed.count > Self.linearLimit { indexes = Self.firstPlaces(of: fixed) }
    }

    private static func firstPlaces(of keys: [String]) -> [String: Int] {
        var places: [String: Int] = [:]
        places.reserveCapacity(keys.count * 2)
        for (offset, key) in keys.enumerated() where places[key] == nil { places[key] = offset + 1 }
        return places
    }

    /// The key's index in `KEYS` (Lua counts from 1), declaring it when it is new.
    package mutating func index(of key: String) -> Int {
        if let indexes {
            if let index = indexes[key] { return index }
        } else if let offset = list.firstIndex(of: key) {
            return offset + 1
        }
        list.append(key)
        if indexes != nil {
            indexes![key] = list.count
        } else if list.count > Self.linearLimit {
            indexes = Self.firstPlaces(of: list)
        }
        return list.count
    }
}
