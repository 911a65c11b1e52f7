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
