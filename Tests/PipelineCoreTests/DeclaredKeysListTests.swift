import PipelineCore
import Testing

/// A call's `KEYS` list: fixed keys keep their places (a key given twice too), a key named later is
/// declared once and found at its first place, the same below and above the length where the
/// list starts keeping an index.
@Suite struct DeclaredKeysListTests {
    @Test func fixedKeysKeepTheirPlacesAndLaterOnesAreDeclaredOnce() {
        var keys = DeclaredKeys(["a", "b", "a", "c"])
        #expect(keys.list == ["a", "b", "a", "c"])
        #expect(keys.index(of: "a") == 1)
        #expect(keys.index(of: "c") == 4)
        #expect(keys.index(of: "d") == 5)
        #expect(keys.index(of: "d") == 5)
        #expect(keys.list == ["a", "b", "a", "c", "d"])
    }

    @Test(arguments: [0, 10, 47, 48, 49, 200])
    func aLongListFindsEveryKeyWhereItWasDeclared(_ fixedCount: Int) {
        let fixed = (0..<fixedCount).map { "fixed:\($0 % max(1, fixedCount / 2))" }
        var keys = DeclaredKeys(fixed)
        var expected = fixed
        for round in 0..<2 {
            for named in 0..<150 {
                let key = named % 3 == 0 && fixedCount > 0 ? "fixed:\(named % max(1, fixedCount / 2))" : "named:\(named)"
                let place = expected.firstIndex(of: key).map { $0 + 1 } ?? {
                    expected.append(key)
                    return expected.count
                }()
                #expect(keys.index(of: key) == place, "round \(round), \(key)")
            }
        }
        #expect(keys.list == expected)
    }
}

/// Keys are Redis's bytes: two keys `String` calls equal (the same letter composed and
/// decomposed) are two keys, each with its own place, below and above the index's length; keys
/// that end alike are told apart by what comes before.
@Suite struct DeclaredKeysBytesTests {
    @Test(arguments: [0, 60])
    func keysEqualAsStringsButNotAsBytesAreTwoKeys(_ fixedCount: Int) {
        let composed = "iap:user:caf\u{e9}", decomposed = "iap:user:cafe\u{301}"
        #expect(composed == decomposed)
        var keys = DeclaredKeys((0..<fixedCount).map { "fixed:\($0)" })
        let first = keys.index(of: composed)
        let second = keys.index(of: decomposed)
        #expect(first == fixedCount + 1 && second == fixedCount + 2)
        #expect(keys.index(of: composed) == first && keys.index(of: decomposed) == second)
        #expect(Array(keys.list.suffix(2).map { Array($0.utf8) }) == [Array(composed.utf8), Array(decomposed.utf8)])
    }

    @Test func keysThatEndAlikeAndHaveOneLengthAreToldApart() {
        var keys = DeclaredKeys(["a:12345678", "b:12345678", ""])
        #expect(keys.index(of: "b:12345678") == 2)
        #expect(keys.index(of: "c:12345678") == 4)
        #expect(keys.index(of: "") == 3)
        #expect(keys.index(of: "12345678") == 5)
        #expect(keys.list == ["a:12345678", "b:12345678", "", "c:12345678", "12345678"])
    }
}
