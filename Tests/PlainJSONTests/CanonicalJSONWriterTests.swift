import PlainJSON
import Testing

/// `CanonicalJSONWriter`: whatever order members are written in, the bytes are a tree's
/// `canonicalText` (members by name, byte order, at every depth); arrays keep their order.
@Suite struct CanonicalJSONWriterTests {
    @Test func membersWrittenOutOfOrderComeOutInNameOrderAtEveryDepth() throws {
        var json = CanonicalJSONWriter()
        json.openObject()
        json.member("transaction_id", "7")
        json.name("transaction")
        json.openObject()
        json.member("quantity", "1")
        json.member("commitment_price", "9")
        json.member("commitment_periods", "12")
        json.member("commitment_period", "P1M")
        json.closeObject()
        json.member("absent", nil as String?)
        json.name("items")
        json.openArray()
        json.int(3)
        json.openObject()
        json.member("b", bool: false)
        json.member("a", int: -1)
        json.closeObject()
        json.string("x")
        json.closeArray()
        json.member("a_longer_name_than_eight", int64: Int64.min)
        json.member("a_longer_name_than_eigh", int64: Int64.max)
        json.member("tree", value: .object(["z": .null, "y": .array([])]))
        json.closeObject()
        let expected = #"{"a_longer_name_than_eigh":9223372036854775807,"a_longer_name_than_eight":-9223372036854775808,"items":[3,{"a":-1,"b":false},"x"],"transaction":{"commitment_period":"P1M","commitment_periods":"12","commitment_price":"9","quantity":"1"},"transaction_id":"7","tree":{"y":[],"z":null}}"#
        #expect(json.text == expected)
        #expect(try JSONValue(parsing: json.bytes).canonicalText == expected)
    }

    @Test func membersWrittenInOrderAreWrittenAsTheyCome() {
        var json = CanonicalJSONWriter()
        json.openObject()
        json.member("a", "1")
        json.member("b", strings: ["q\"uote", "tab\t", "é"])
        json.member("c", strings: nil)
        json.name("d")
        json.openObject()
        json.closeObject()
        json.closeObject()
        #expect(json.text == #"{"a":"1","b":["q\"uote","tab\t","é"],"d":{}}"#)
    }

    /// The same members a tree has, written in any order, give the tree's canonical text.
    @Test(arguments: [[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [2, 0, 5, 1, 4, 3], [3, 5, 0, 4, 2, 1]])
    func anyOrderGivesTheTreesCanonicalText(order: [Int]) throws {
        let members: [(StaticString, String)] = [
            ("original_transaction_id", "1"), ("original_purchase_date_ms", "2"), ("offer_type", "3"), ("offer_period", "4"),
            ("o", "5"), ("ü", "6"),
        ]
        var json = CanonicalJSONWriter()
        json.openObject()
        for index in order { json.member(members[index].0, members[index].1) }
        json.closeObject()
        var tree = JSONObject()
        for (name, value) in members { tree[name.description] = .string(value) }
        #expect(json.text == JSONValue.object(tree).canonicalText)
    }

    @Test func numbersAreWrittenAsStringWouldWriteThem() {
        for value in [0, 7, -7, 10, 1_700_000_000_123, Int.max, Int.min] {
            var json = CanonicalJSONWriter()
            json.int(value)
            #expect(json.text == String(value))
        }
    }

    @Test func aTreeIsReadBackFromTheText() {
        let value = CanonicalJSONWriter.value { json in
            json.openObject()
            json.member("b", "2")
            json.member("a", int: 1)
            json.closeObject()
        }
        #expect(value == .object(["a": .number("1"), "b": .string("2")]))
        #expect(CanonicalJSONWriter.text { $0.string("x") } == #""x""#)
    }
}
