import Foundation

/// A legacy app receipt as StoreKit 1 hands it to an app: a PKCS#7 signed-data container whose
/// payload is Apple's SET of receipt attributes (the bundle id, and one in-app receipt per
/// purchase with its product, transaction and original transaction ids). The containers are
/// written with indefinite lengths, as Apple's receipts are; the payload is DER. No signer is
/// included: what reads it (`AppReceiptReader`) checks none, and asks the Server API instead.
public struct SimulatedAppReceipt: Sendable {
    public struct Purchase: Sendable {
        public var transactionID: String
        public var originalTransactionID: String
        public var productID: String

        public init(transactionID: String, originalTransactionID: String? = nil, productID: String) {
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID ?? transactionID
            self.productID = productID
        }
    }

    public var bundleID: String
    public var purchases: [Purchase]

    public init(bundleID: String, purchases: [Purchase]) {
        self.bundleID = bundleID
        self.purchases = purchases
    }

    /// The receipt's bytes; `indefiniteLengths` false: DER throughout, as older receipts were.
    public func bytes(indefiniteLengths: Bool = true) -> [UInt8] {
        func wrap(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { indefiniteLengths ? Self.indefinite(tag, content) : Self.tlv(tag, content) }
        var fields = [Self.attribute(2, Self.utf8(bundleID)), Self.attribute(3, Self.utf8("1.0"))]
        for purchase in purchases {
            let inApp = Self.set([
                Self.attribute(1701, Self.integer(1)), Self.attribute(1702, Self.utf8(purchase.productID)),
                Self.attribute(1703, Self.utf8(purchase.transactionID)), Self.attribute(1705, Self.utf8(purchase.originalTransactionID)),
            ])
            fields.append(Self.attribute(17, inApp))
        }
        let payload = Self.set(fields)
        let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
        let dataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
        let sha256: [UInt8] = Self.tlv(0x30, [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01] + [0x05, 0x00])
        let encapsulated = wrap(0x30, dataOID + wrap(0xA0, Self.tlv(0x04, payload)))
        let signedData = wrap(0x30, Self.integer(1) + Self.tlv(0x31, sha256) + encapsulated + Self.tlv(0x31, []))
        return wrap(0x30, signedDataOID + wrap(0xA0, signedData))
    }

    /// What a client sends as `receipt_data`.
    public func receiptData() -> String {
        Data(bytes()).base64EncodedString()
    }

    static func attribute(_ type: Int, _ value: [UInt8]) -> [UInt8] {
        tlv(0x30, integer(type) + integer(1) + tlv(0x04, value))
    }

    static func set(_ members: [[UInt8]]) -> [UInt8] {
        tlv(0x31, members.flatMap { $0 })
    }

    static func utf8(_ text: String) -> [UInt8] {
        tlv(0x0C, Array(text.utf8))
    }

    static func integer(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        repeat {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        } while rest > 0
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(0x02, bytes)
    }

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8]
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            length = []
            var rest = content.count
            while rest > 0 {
                length.insert(UInt8(rest & 0xFF), at: 0)
                rest >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + content
    }

    /// BER's indefinite length: the content, then two zero bytes.
    static func indefinite(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        [tag, 0x80] + content + [0x00, 0x00]
    }
}
