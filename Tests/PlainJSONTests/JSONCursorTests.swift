import PlainJSON
import Testing

/// `JSONCursor`: a model read straight from the text follows the tree's rules (`null` absent, the
/// wrong type an error naming the member, the later of two members of a name), skips what it does
/// not read, and refuses text that is not JSON as `JSONValue(parsing:)` does.
@Suite struct JSONCursorTests {
    /// What a small reader took from an object: a string, a lenient id, a number, a flag, a list.
    struct Read: Equatable {
        var name: String?
        var id: String?
        var count: Int64?
        var on: Bool?
        var tags: [String]?
        var inner: String?
    }

    static func read(_ text: String) throws(JSONShapeError) -> Read {
        try JSONCursor.read(text) { cursor throws(JSONShapeError) in
            var read = Read()
            let isObject = try cursor.members(asMember: "document") { name, value throws(JSONShapeError) in
                switch name {
                case "name": read.name = try value.string(asMember: "name")
                case "id": read.id = try value.lenientString(asMember: "id")
                case "count": read.count = try value.int64(asMember: "count")
                case "on": read.on = try value.bool(asMember: "on")
                case "tags":
                    var tags: [String] = []
                    let isArray = try value.items(asMember: "tags") { item throws(JSONShapeError) in
                        if let tag = try item.string(asMember: "tags") { tags.append(tag) }
                    }
                    read.tags = isArray ? tags : nil
                case "inner":
                    _ = try value.members(asMember: "inner") { name, value throws(JSONShapeError) in
                        if case "name" = name { read.inner = try value.string(asMember: "inner.name") }
                    }
                default: break
                }
            }
            guard isObject else { throw JSONShapeError(member: "document", reason: "null") }
            return read
        }
    }

    @Test func readsEachMemberIntoItsField() throws {
        let read = try Self.read(#" { "name" : "gold\u00e9\n" , "id": 2000000000000001, "count": -9223372036854775808, "on": true, "tags": ["a", null, "b"], "inner": {"x": [1, {"y": null}], "name": "in"} } "#)
        #expect(read == Read(name: "gold\u{E9}\n", id: "2000000000000001", count: .min, on: true, tags: ["a", "b"], inner: "in"))
        #expect(try Self.read(#"{"id":"7","on":false}"#) == Read(id: "7", on: false))
        #expect(try Self.read(#"{"id":true}"#).id == "1")
        #expect(try Self.read("{}") == Read())
    }

    /// `null` reads as absent; a later member of a name replaces an earlier one, `null` too.
    @Test func nullIsAbsentAndTheLaterMemberWins() throws {
        #expect(try Self.read(#"{"name":null,"count":null,"on":null,"tags":null,"id":null}"#) == Read())
        #expect(try Self.read(#"{"name":"a","name":"b"}"#).name == "b")
        #expect(try Self.read(#"{"name":"a","name":null}"#).name == nil)
    }

    /// Members it does not read are skipped, whatever they hold; names with escapes are matched
    /// by the bytes they stand for.
    @Test func skipsWhatItDoesNotReadAndMatchesEscapedNames() throws {
        let read = try Self.read(#"{"other":{"deep":[[["x"]],{"a":1e3}]},"n\u0061me":"escaped","more":-0.5e-3}"#)
        #expect(read == Read(name: "escaped"))
    }

    /// A value of another type than the one asked for names its member.
    @Test(arguments: [
        (#"{"name":1}"#, "name", "not a string"),
        (#"{"id":[]}"#, "id", "not a string or a number"),
        (#"{"count":"1"}"#, "count", "not an integer"),
        (#"{"count":1.5}"#, "count", "not an integer"),
        (#"{"count":1e3}"#, "count", "not an integer"),
        (#"{"count":9223372036854775808}"#, "count", "not an integer"),
        (#"{"on":"true"}"#, "on", "not a boolean"),
        (#"{"tags":{}}"#, "tags", "not an array"),
        (#"{"tags":[1]}"#, "tags", "not a string"),
        (#"{"inner":[]}"#, "inner", "not an object"),
        (#"{"inner":{"name":false}}"#, "inner.name", "not a string"),
        (#"["not an object"]"#, "document", "not an object"),
    ])
    func theWrongTypeNamesItsMember(_ text: String, member: String, reason: String) {
        #expect(throws: JSONShapeError(member: member, reason: reason)) { try Self.read(text) }
    }

    /// What `JSONValue(parsing:)` refuses, the cursor refuses too, where or not it reads the value.
    @Test(arguments: [
        "", "not json", #"{"name":"a"} x"#, #"{"name":"a""#, #"{"name" "a"}"#, #"{"name":"a",}"#, #"{"other":[1,]}"#,
        #"{"other":tru}"#, #"{"other":01}"#, #"{"name":"\x"}"#, #"{"other":"\ud800"}"#, "{\"name\":\"a\u{1}\"}",
        #"{"name":"a"}{}"#, #"{"name":nul}"#, #"{"count":-}"#,
    ])
    func refusesWhatIsNotJSON(_ text: String) {
        #expect((try? JSONValue(parsing: text)) == nil)
        #expect(throws: JSONShapeError.self) { try Self.read(text) }
    }

    @Test func refusesNestingDeeperThanTheTreeReads() throws {
        let deep = String(repeating: "[", count: JSONValue.maxDepth) + String(repeating: "]", count: JSONValue.maxDepth)
        let deeper = "[" + deep + "]"
        #expect((try? JSONValue(parsing: #"{"other":\#(deep)}"#)) == nil)
        #expect(throws: JSONShapeError.self) { try Self.read(#"{"other":\#(deep)}"#) }
        let shallow = String(repeating: "[", count: JSONValue.maxDepth - 1) + String(repeating: "]", count: JSONValue.maxDepth - 1)
        #expect((try? JSONValue(parsing: #"{"other":\#(shallow)}"#)) != nil)
        #expect(try Self.read(#"{"other":\#(shallow)}"#) == Read())
        #expect((try? JSONValue(parsing: deeper)) == nil)
    }

    /// A tree read through `JSONMemberReading` gives what the text gives.
    @Test func aTreeReadsAsItsText() throws {
        let text = #"{"name":"a","id":5,"on":true,"skip":{"x":1}}"#
        let tree = try JSONValue(parsing: text)
        var fromTree = Read()
        _ = try tree.members(asMember: "document") { name, value throws(JSONShapeError) in
            switch name {
            case "name": fromTree.name = try value.string(asMember: "name")
            case "id": fromTree.id = try value.lenientString(asMember: "id")
            case "on": fromTree.on = try value.bool(asMember: "on")
            default: break
            }
        }
        #expect(fromTree == Read(name: "a", id: "5", on: true))
        #expect(try Self.read(text) == fromTree)
    }
}
