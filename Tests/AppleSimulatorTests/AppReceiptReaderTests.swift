import AppleReceipt
import AppleSimulator
import Foundation
import Testing

/// The legacy receipt reader (`IAP_RECEIPT_MODE=server_api`): the ids of every in-app purchase
/// out of the PKCS#7 container, in BER (indefinite lengths, as Apple writes them) and DER; any
/// other input is an `AppReceiptError`, never a crash.
struct AppReceiptReaderTests {
    static let receipt = SimulatedAppReceipt(bundleID: "com.example.game", purchases: [
        .init(transactionID: "2000000000000071", productID: "gold.100"),
        .init(transactionID: "2000000000000073", originalTransactionID: "2000000000000072", productID: "vip.monthly"),
    ])

    @Test(arguments: [true, false])
    func everyPurchaseIsReadInBothEncodings(indefiniteLengths: Bool) throws {
        let contents = try AppReceiptReader.read(Self.receipt.bytes(indefiniteLengths: indefiniteLengths))
        #expect(contents.bundleID == "com.example.game")
        #expect(contents.purchases == [
            .init(transactionID: "2000000000000071", originalTransactionID: "2000000000000071", productID: "gold.100"),
            .init(transactionID: "2000000000000073", originalTransactionID: "2000000000000072", productID: "vip.monthly"),
        ])
    }

    @Test func aReceiptWithoutPurchasesReadsEmpty() throws {
        let contents = try AppReceiptReader.read(SimulatedAppReceipt(bundleID: "com.example.game", purchases: []).bytes())
        #expect(contents.bundleID == "com.example.game" && contents.purchases.isEmpty)
    }

    @Test func whatIsNotAnAppReceiptIsAnErrorNeverACrash() {
        let json = Array(#"{"bundle_id":"com.example.game","transactions":[]}"#.utf8)
        let sequenceOfNothing: [UInt8] = [0x30, 0x00]
        let wrongOID: [UInt8] = [0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x03, 0xA0, 0x00]
        let deep: [UInt8] = [UInt8](repeating: 0x30, count: 4096).flatMap { [$0, UInt8(0x80)] }
        let junk: [[UInt8]] = [[], [0x00], json, sequenceOfNothing, wrongOID, deep, [UInt8](repeating: 0xFF, count: 64)]
        for bad in junk {
            #expect(throws: AppReceiptError.self) { try AppReceiptReader.read(bad) }
        }
    }

    /// Every prefix and every one-byte change of a real-shaped receipt either reads or is refused.
    @Test func truncatedOrFlippedBytesAreReadOrRefusedNeverACrash() {
        let bytes = Self.receipt.bytes()
        var refused = 0
        for length in 0..<bytes.count where (try? AppReceiptReader.read(Array(bytes.prefix(length)))) == nil { refused += 1 }
        #expect(refused == bytes.count, "a receipt cut short must never read")
        for index in bytes.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var changed = bytes
                changed[index] ^= flip
                _ = try? AppReceiptReader.read(changed)
            }
        }
    }
}
