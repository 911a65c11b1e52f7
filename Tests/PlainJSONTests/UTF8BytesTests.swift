import PlainJSON
import Testing

/// `UTF8Bytes.equal`: strings the same only when their UTF-8 bytes are, whatever `==` says.
@Suite struct UTF8BytesTests {
    @Test func sameBytesAreEqual() {
        let long = String(repeating: "purchase:", count: 8)
        #expect(UTF8Bytes.equal("", ""))
        #expect(UTF8Bytes.equal("iap:ticket:1", "iap:" + "ticket:1"))
        #expect(UTF8Bytes.equal(long, String(long.reversed().reversed())))
    }

    /// "é" composed and decomposed are one `String` under `==` but two keys in Redis.
    @Test func equivalentButDifferentBytesAreNot() {
        #expect("caf\u{E9}" == "cafe\u{301}")
        #expect(!UTF8Bytes.equal("caf\u{E9}", "cafe\u{301}"))
        #expect(!UTF8Bytes.equal("a", "a\u{0}"))
        #expect(!UTF8Bytes.equal("", "a"))
        #expect(!UTF8Bytes.equal("abcdefghi", "abcdefghj"))
    }
}
