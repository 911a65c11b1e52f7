/// Ticket ids: 128 random bits from the system's CSPRNG, base64url without padding (22 characters).
package enum TicketID {
    package static func make() -> String { random(bytes: 16) }

    /// `count` random bytes from the system's CSPRNG, base64url without padding: a ticket id, a
    /// console session's cookie, a one-time password.
    /// Eight bytes a draw: one call to the system's generator for each eight (a draw a byte was 16
    /// `getrandom` calls a ticket, 2 % of the intake's CPU).
    package static func random(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            let word = generator.next()
            withUnsafeBytes(of: word) { bytes.append(contentsOf: $0.prefix(count - bytes.count)) }
        }
        return base64URL(bytes)
    }

    /// 22 characters of base64url, or with buckets (`IAP_BUCKETS` above 1) the bucket's number,
    /// a dot and the 22 (`17.AbC…`); the store names the bucket (`BucketLayout.ticketID`).
    package static func isWellFormed(_ text: String) -> Bool {
        var id = Substring(text)
        if let dot = text.firstIndex(of: ".") {
            let bucket = text[..<dot]
            guard (1...4).contains(bucket.utf8.count), bucket.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return false }
            id = text[text.index(after: dot)...]
        }
        return id.utf8.count == 22 && id.utf8.allSatisfy { alphabet.contains($0) }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func base64URL(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<(chunk.count + 1) {
                out.append(alphabet[Int((value >> (18 - 6 * UInt32(position))) & 0x3F)])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
