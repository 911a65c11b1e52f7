import PlainJSON
import Testing

/// `Hex`: lowercase digits of any byte sequence, and back from either case.
@Suite struct HexTests {
    @Test func encodesEveryByteAsTwoLowercaseDigits() {
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode([0x00, 0x09, 0x0a, 0x0f, 0x10, 0x9f, 0xa0, 0xff]) == "00090a0f109fa0ff")
        #expect(Hex.encode((0...255).map { UInt8($0) }).count == 512)
        // Not only arrays: any sequence of bytes (a digest, a slice, a lazy map).
        #expect(Hex.encode("abc".utf8) == "616263")
        #expect(Hex.encode([0xde, 0xad, 0xbe, 0xef][1...]) == "adbeef")
    }

    @Test func decodesWhatItEncodesAndRefusesTheRest() {
        let bytes = (0...255).map { UInt8($0) }
        #expect(Hex.decode(Hex.encode(bytes)) == bytes)
        #expect(Hex.decode("ABcd") == [0xab, 0xcd])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }
}
