/// The `KEYS` of one call: the script's fixed keys first, then those its arguments name by index
/// (a purchase's claim, another user's lifetime set, a job's ticket…), each declared once.
package struct DeclaredKeys: Sendable {
    package private(set) var list: [String]
    private var indexes: [String: Int] = [:]

    package init(_ fixed: [String]) {
        list = fixed
        indexes.reserveCapacity(fixed.count + 8)
        for (offset, key) in fixed.enumerated() where indexes[key] == nil { indexes[key] = offset + 1 }
    }

    /// The key's index in `KEYS` (Lua counts from 1), declaring it when it is new.
    package mutating func index(of key: String) -> Int {
        if let index = indexes[key] { return index }
        list.append(key)
        indexes[key] = list.count
        return list.count
    }
}
