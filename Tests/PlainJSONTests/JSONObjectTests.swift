import PlainJSON
import Testing

/// `JSONObject`: members kept in the order they came, each name once, found along the list or,
/// past 32 members, through an index; written in canonical order however they were built.
@Suite struct JSONObjectTests {
    @Test func setsReplacesInPlaceAndRemoves() {
        var object: JSONObject = ["b": .int(1), "a": .int(2)]
        object["c"] = .int(3)
        object["b"] = .int(4)
        #expect(object.keys == ["b", "a", "c"])
        #expect(object["b"] == .int(4))
        object["a"] = nil
        object["absent"] = nil
        #expect(object.keys == ["b", "c"])
        #expect(object.removeValue(forKey: "c") == .int(3))
        #expect(object.removeValue(forKey: "c") == nil)
        #expect(object.count == 1 && object["a"] == nil)
        #expect(JSONValue.object(object).canonicalText == #"{"b":4}"#)
    }

    /// Names alike: of the same length, of one another's prefix, the same first eight bytes, a
    /// zero byte, small and large strings, non-ASCII, and "é" written two ways (two names, as
    /// their bytes differ). Each is found, and they are written in the byte order of their names.
    static let namesAlike = [
        "ab", "ba", "a", "a\u{0}", "abc", "abd", "é", "e\u{301}", "e", "abcdefgh", "abcdefghi", "abcdefgi", "abcdefgh\u{0}",
        "subscription_key", "subscription_id", "subscriptions", String(repeating: "x", count: 40), String(repeating: "x", count: 41),
    ]

    @Test(arguments: [0, 40])
    func findsEachNameAmongNamesAlike(padding: Int) throws {
        let names = Self.namesAlike + (0..<padding).map { "pad\($0)" }
        var object = JSONObject()
        for (place, name) in names.enumerated() { object[name] = .int(place) }
        #expect(object.count == names.count)
        for (place, name) in names.enumerated() { #expect(object[name] == .int(place), "\(Array(name.utf8))") }
        #expect(object["b"] == nil && object["abcd"] == nil && object["abcdefg"] == nil && object[String(repeating: "x", count: 39)] == nil)
        let written = Array(JSONValue.object(object).canonicalText.utf8)
        let byBytes = names.enumerated().sorted { $0.element.utf8.lexicographicallyPrecedes($1.element.utf8) }
        let expected = "{" + byBytes.map { JSONValue.string($0.element).canonicalText + ":\($0.offset)" }.joined(separator: ",") + "}"
        #expect(written == Array(expected.utf8))
        #expect(try JSONValue(parsing: written) == .object(object))
    }

    @Test func equalWhateverTheOrderUnequalOtherwise() {
        let one: JSONObject = ["a": .int(1), "b": .object(["c": .null, "d": .bool(true)])]
        let other: JSONObject = ["b": .object(["d": .bool(true), "c": .null]), "a": .int(1)]
        #expect(one == other)
        #expect(one != ["a": .int(1)])
        #expect(one != ["a": .int(2), "b": .object(["c": .null, "d": .bool(true)])])
        #expect(one != ["a": .int(1), "e": .object(["c": .null, "d": .bool(true)])])
        #expect(JSONObject(["b": .int(1), "a": .int(2)]) == ["a": .int(2), "b": .int(1)])
    }

    /// A name that is not UTF-8, or escapes a lone surrogate, is refused as a string is (so a
    /// name's bytes are always its string's, which finding it by its first bytes relies on);
    /// an escaped name is found by what it spells.
    @Test func aNameIsValidUTF8AndFoundByWhatItSpells() throws {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D]) }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: #"{"a\ud800b": 1}"#) }
        let value = try JSONValue(parsing: #"{"transaction\u0049d_long_name": 1, "\u00e9": 2}"#)
        #expect(value["transactionId_long_name"] == .int(1) && value["é"] == .int(2))
    }

    /// A later member of a name read from text replaces the earlier one; the name is written once.
    @Test func aNameReadTwiceKeepsTheLaterValue() throws {
        let value = try JSONValue(parsing: #"{"b": 1, "a": 2, "b": 3}"#)
        #expect(value.object?.count == 2)
        #expect(value["b"] == .int(3))
        #expect(value.canonicalText == #"{"a":2,"b":3}"#)
    }

    /// Built in order, in reverse, from a dictionary or read from text: the same canonical bytes.
    @Test func writesCanonicalOrderHoweverItWasBuilt() throws {
        let names = (0..<40).map { "m\($0)" }
        var forward = JSONObject(), backward = JSONObject()
        for name in names { forward[name] = .string(name) }
        for name in names.reversed() { backward[name] = .string(name) }
        let fromDictionary = JSONObject(Dictionary(uniqueKeysWithValues: names.map { ($0, JSONValue.string($0)) }))
        let text = JSONValue.object(forward).canonicalText
        #expect(text.hasPrefix(#"{"m0":"m0","m1":"m1","m10":"m10","#))
        #expect(JSONValue.object(backward).canonicalText == text)
        #expect(JSONValue.object(fromDictionary).canonicalText == text)
        #expect(try JSONValue(parsing: text).canonicalText == text)
    }

    /// Around and far past the size where the index starts: every name found, a removal from the
    /// middle and a replacement leave the others where they were.
    @Test(arguments: [31, 32, 33, 34, 500])
    func aLargeObjectFindsEveryMember(count: Int) throws {
        var object = JSONObject()
        for place in 0..<count { object["k\(place)"] = .int(place) }
        object["k\(count / 2)"] = nil
        object["k0"] = .string("first")
        object["new"] = .bool(true)
        #expect(object.count == count)
        for place in 1..<count where place != count / 2 { #expect(object["k\(place)"] == .int(place)) }
        #expect(object["k\(count / 2)"] == nil && object["k0"] == .string("first") && object["new"] == .bool(true))
        let read = try JSONValue(parsing: JSONValue.object(object).canonicalText)
        #expect(read == .object(object))
        #expect(read["k\(count - 1)"] == .int(count - 1))
        #expect(object.dictionary.count == count)
    }

    @Test func mapsMergesAndKeeps() {
        let object: JSONObject = ["a": .string("x"), "b": .int(1)]
        #expect(object.compactMapValues(\.string) == ["a": "x"])
        #expect(object.mapValues { _ in .null } == ["a": .null, "b": .null])
        let merged = object.merging(["b": .int(2), "c": .int(3)]) { _, new in new }
        #expect(merged == ["a": .string("x"), "b": .int(2), "c": .int(3)])
        #expect(merged.keys == ["a", "b", "c"])
    }
}
