import Foundation
import PlainJSON
import Testing

@Suite struct JSONValueTests {
    @Test func readsEveryKindOfValue() throws {
        let value = try JSONValue(parsing: #" {"a": [1, -2.5e3, true, false, null], "b": {"c": "d"}, "e": ""} "#)
        #expect(value == .object([
            "a": .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null]),
            "b": .object(["c": .string("d")]),
            "e": .string(""),
        ]))
        #expect(value["a"]?.array?.first?.int == 1)
        #expect(value["b"]?["c"]?.string == "d")
    }

    @Test func keepsLargeIntegersExact() throws {
        let value = try JSONValue(parsing: #"{"id": 2000000123456789012, "ms": 1700000000000}"#)
        #expect(value["id"] == .number("2000000123456789012"))
        #expect(try value.int64("ms") == 1_700_000_000_000)
        #expect(try value.lenientString("id") == "2000000123456789012")
    }

    @Test func decodesEscapes() throws {
        let value = try JSONValue(parsing: #""a\"b\\c\/d\n\t\r\b\f\u00e9\ud83d\ude00""#)
        #expect(value == .string("a\"b\\c/d\n\t\r\u{8}\u{C}é😀"))
    }

    @Test func writesCanonicalText() {
        let value = JSONValue.object([
            "b": .array([.int(1), .string("x/y"), .null]),
            "a_b": .bool(true),
            "a": .string("q\"\\\n\u{1}é"),
        ])
        #expect(value.canonicalText == #"{"a":"q\"\\\n\u0001é","a_b":true,"b":[1,"x/y",null]}"#)
    }

    /// The writer copies runs of bytes that need no escape at once: escapes at the start, the
    /// end, side by side and alone; names in UTF-8 byte order, a longer name after its prefix.
    @Test func writesEscapesWhereverTheyStandAndNamesInByteOrder() {
        #expect(JSONValue.string("\"").canonicalText == #""\"""#)
        #expect(JSONValue.string("\nab").canonicalText == #""\nab""#)
        #expect(JSONValue.string("ab\\").canonicalText == #""ab\\""#)
        #expect(JSONValue.string("a\u{1F}\u{0}\"b").canonicalText == #""a\u001f\u0000\"b""#)
        #expect(JSONValue.string("").canonicalText == #""""#)
        let names = JSONValue.object(["é": .int(1), "z": .int(2), "a": .int(3), "ab": .int(4), "Z": .int(5)])
        #expect(names.canonicalText == #"{"Z":5,"a":3,"ab":4,"z":2,"é":1}"#)
        let long = String(repeating: "Ab0/+=", count: 700)
        #expect(JSONValue.string(long + "\t" + long).canonicalText == "\"" + long + "\\t" + long + "\"")
    }

    /// Strings are scanned eight bytes at a time: a byte to escape (or a non-ASCII one, or invalid
    /// UTF-8) at every place in and around a word is found, written and read as one at a time would.
    @Test func findsEveryByteToEscapeWhereverItStandsInAWord() throws {
        for length in 0..<27 {
            for place in 0...length {
                for special in ["\"", "\\", "\n", "\u{1}", "\u{1F}", "é", "\u{7F}", " "] {
                    var text = String(repeating: "a", count: length)
                    text.insert(contentsOf: special, at: text.index(text.startIndex, offsetBy: place))
                    let written = JSONValue.string(text).canonicalText
                    #expect(written == Self.escapedByteByByte(text), "\(length) \(place) \(special.unicodeScalars.first!.value)")
                    #expect(try JSONValue(parsing: written) == .string(text))
                }
            }
            for place in 0...length {
                var bytes = Array(String(repeating: "b", count: length).utf8)
                bytes.insert(0xFF, at: place)
                #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22] + bytes + [0x22]) }
                var control = Array(String(repeating: "b", count: length).utf8)
                control.insert(0x09, at: place)
                #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22] + control + [0x22]) }
            }
        }
    }

    private static func escapedByteByByte(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    @Test func membersLeaveOutAbsentValues() {
        let none: String? = nil
        #expect(JSONValue.members(["a": .string("x"), "b": none.json]).canonicalText == #"{"a":"x"}"#)
    }

    @Test func roundTripsWhatItWrites() throws {
        var generator = SplitMix(seed: 12)
        for _ in 0..<300 {
            let value = Self.randomValue(depth: 0, using: &generator)
            let text = value.canonicalText
            #expect(try JSONValue(parsing: text) == value, "\(text)")
        }
    }

    /// What Foundation writes, we read to the same value; what we write, Foundation reads.
    @Test func agreesWithFoundation() throws {
        let object: [String: Any] = ["name": "a/b \"c\" é 😀\n", "n": 42, "list": [1, 2, 3], "flag": true, "nested": ["x": NSNull()]]
        let foundation = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        let ours = try JSONValue(parsing: Array(foundation))
        #expect(ours["name"]?.string == "a/b \"c\" é 😀\n")
        #expect(ours["nested"]?["x"] == .null)
        let back = try JSONSerialization.jsonObject(with: Data(ours.canonicalText.utf8)) as? [String: Any]
        #expect(back?["name"] as? String == "a/b \"c\" é 😀\n")
        #expect((back?["list"] as? [Int]) == [1, 2, 3])
    }

    @Test(arguments: [
        "", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "01", "-", "1.", "1e", "tru", "nul", "\"abc", "\"a\\x\"",
        "\"\\u12\"", "\"\\ud800\"", "\"\\udc00x\"", "\"a\u{1}b\"", "{} {}", "[1] x", "{1:2}", "+1", ".5",
    ])
    func refusesWhatIsNotJSON(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22, 0x5C, 0x6E, 0xFF, 0x22]) }
    }

    @Test func refusesNestingDeeperThanTheLimit() throws {
        let deep = String(repeating: "[", count: JSONValue.maxDepth + 1) + String(repeating: "]", count: JSONValue.maxDepth + 1)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: deep) }
        let fine = String(repeating: "[", count: JSONValue.maxDepth) + String(repeating: "]", count: JSONValue.maxDepth)
        #expect(throws: Never.self) { try JSONValue(parsing: fine) }
    }

    @Test func membersOfTheWrongTypeAreErrorsAbsentOnesNil() throws {
        let value = try JSONValue(parsing: #"{"s": "x", "n": 7, "z": null, "f": 1.5}"#)
        #expect(try value.stringIfPresent("z") == nil)
        #expect(try value.stringIfPresent("missing") == nil)
        #expect(throws: JSONShapeError(member: "n", reason: "not a string")) { try value.string("n") }
        #expect(throws: JSONShapeError(member: "missing", reason: "missing")) { try value.string("missing") }
        #expect(throws: JSONShapeError(member: "f", reason: "not an integer")) { try value.int64("f") }
        #expect(try value.int("n") == 7)
        #expect(throws: JSONShapeError.self) { try JSONValue.array([]).string("s") }
    }

    static func randomValue(depth: Int, using generator: inout SplitMix) -> JSONValue {
        let choice = Int(generator.next() % (depth > 3 ? 4 : 6))
        switch choice {
        case 0: return .null
        case 1: return .bool(generator.next() % 2 == 0)
        case 2: return .int(Int64(bitPattern: generator.next()))
        case 3: return .string(randomString(using: &generator))
        case 4:
            return .array((0..<Int(generator.next() % 4)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            var members = JSONObject()
            for _ in 0..<Int(generator.next() % 4) {
                members[randomString(using: &generator)] = randomValue(depth: depth + 1, using: &generator)
            }
            return .object(members)
        }
    }

    /// Members handed over one by one, in the text's order, values as `JSONValue(parsing:)` reads
    /// them; anything but one object is refused, and the body's own error comes out unchanged.
    @Test func membersAreHandedOverAsTheyAreRead() throws {
        var seen: [(String, JSONValue)] = []
        let text = #" {"b": [1, {"c": null}], "a": "x\u00e9", "b": true, "d": {}, "\u0061\n": 0, "é": 1} "#
        try JSONValue.forEachMember(parsing: Array(text.utf8)) { seen.append((String(decoding: $0, as: UTF8.self), $1)) }
        #expect(seen.map(\.0) == ["b", "a", "b", "d", "a\n", "é"])
        #expect(seen.map(\.1) == [
            .array([.number("1"), .object(["c": .null])]), .string("xé"), .bool(true), .object([:]), .number("0"), .number("1"),
        ])
        // A name is held to a string's rules: no raw control character, valid UTF-8, closed.
        let badNames = [[0x7B, 0x22, 0x01, 0x22, 0x3A, 0x31, 0x7D], [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], Array(#"{"ab"#.utf8)]
        for bytes in badNames {
            #expect(throws: JSONParseError.self, "\(bytes)") { try JSONValue.forEachMember(parsing: bytes) { _, _ in } }
        }
        for refused in ["[1]", "\"a\"", "{\"a\":1} x", "{\"a\":1", "", "{\"a\" 1}"] {
            #expect(throws: JSONParseError.self, "\(refused)") { try JSONValue.forEachMember(parsing: Array(refused.utf8)) { _, _ in } }
        }
        struct Stop: Error {}
        var calls = 0
        #expect(throws: Stop.self) {
            try JSONValue.forEachMember(parsing: Array(#"{"a":1,"b":2}"#.utf8)) { _, _ in
                calls += 1
                throw Stop()
            }
        }
        #expect(calls == 1)
    }

    static func randomString(using generator: inout SplitMix) -> String {
        let alphabet: [Character] = ["a", "Z", "0", "/", "\\", "\"", "\n", "\u{0}", "\u{1F}", "é", "😀", " ", "_"]
        return String((0..<Int(generator.next() % 8)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
    }
}

/// A small seeded generator, so a failing case can be replayed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
