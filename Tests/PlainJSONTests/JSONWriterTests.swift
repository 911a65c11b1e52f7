import PlainJSON
import Testing

/// `JSONWriter`: members in the order written, commas only between values at every depth, absent
/// members left out, strings and caller-given names escaped; what it writes parses back.
@Suite struct JSONWriterTests {
    @Test func writesMembersInTheOrderGivenAndLeavesOutTheAbsent() {
        var json = JSONWriter()
        json.openObject()
        json.member("z", "last first")
        json.member("absent", nil as String?)
        json.member("a", int: 7)
        json.member("no", int: nil)
        json.member("keep", flag: true)
        json.member("off", flag: false)
        json.member("tree", value: .object(["b": .string("1"), "a": .null]))
        json.member("none", value: nil)
        json.closeObject()
        #expect(json.text == #"{"z":"last first","a":7,"keep":true,"tree":{"a":null,"b":"1"}}"#)
    }

    @Test func separatesValuesAtEveryDepth() throws {
        var json = JSONWriter()
        json.openObject()
        json.name("items")
        json.openArray()
        for word in ["one", "two"] {
            json.openObject()
            json.member("word", word)
            json.member("k", fields: [("x", 1)])
            json.closeObject()
        }
        json.openArray()
        json.closeArray()
        json.string("three")
        json.int(-4)
        json.closeArray()
        json.name("empty")
        json.openObject()
        json.closeObject()
        json.closeObject()
        #expect(json.text == #"{"items":[{"word":"one","k":{"x":1}},{"word":"two","k":{"x":1}},[],"three",-4],"empty":{}}"#)
        let parsed = try JSONValue(parsing: json.text)
        #expect(parsed["items"]?.array?.count == 5)
    }

    @Test func escapesStringsAndNamesTheCallerGives() throws {
        let awkward = "quote \" back \\ line \n tab \t bell \u{07} é"
        var json = JSONWriter()
        json.openObject()
        json.key(awkward)
        json.string(awkward)
        json.name("k")
        json.openObject()
        json.key(awkward)
        json.int(2)
        json.key("plain")
        json.int(3)
        json.closeObject()
        json.closeObject()
        let parsed = try JSONValue(parsing: json.text)
        #expect(parsed[awkward]?.string == awkward)
        #expect(parsed["k"]?[awkward]?.int == 2)
        #expect(parsed["k"]?["plain"]?.int == 3)
        #expect(!json.text.contains("\n"))
    }

    @Test func writesLiteralNamedNumbersInTheOrderGiven() {
        var json = JSONWriter()
        json.openObject()
        json.member("k", fields: [("claim", 12), ("owner", 0), ("rechecks", -3), ("big", Int.max)])
        json.member("none", fields: [])
        json.closeObject()
        #expect(json.text == #"{"k":{"claim":12,"owner":0,"rechecks":-3,"big":9223372036854775807},"none":{}}"#)
    }

    @Test func escapesEveryControlByteAsJSONSays() {
        var json = JSONWriter()
        json.string("\"\\\n\r\t\u{08}\u{0C}\u{01}\u{1F}/")
        #expect(json.text == #""\"\\\n\r\t\b\f\u0001\u001f/""#)
    }
}
