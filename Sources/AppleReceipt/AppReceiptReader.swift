import SwiftASN1

/// Reads the transaction ids out of a legacy app receipt (the PKCS#7 container StoreKit 1 hands
/// the app), as Apple's server libraries' `ReceiptUtility` does: no signature is checked, so what
/// it reads is only a question to put to the App Store Server API, which answers with what Apple
/// signs. BER (Apple's receipts use indefinite lengths) and DER both read; anything else is an
/// `AppReceiptError`, never a crash.
public enum AppReceiptReader {
    /// What the receipt lists: its app and each in-app purchase's ids, in the receipt's order.
    public struct Contents: Sendable, Equatable {
        public var bundleID: String?
        public var purchases: [Purchase]
    }

    public struct Purchase: Sendable, Equatable {
        public var transactionID: String
        public var originalTransactionID: String?
        public var productID: String?

        public init(transactionID: String, originalTransactionID: String?, productID: String?) {
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.productID = productID
        }
    }

    /// The receipt's fields by Apple's attribute type (Receipt Fields, "ASN.1 Field Type").
    enum Field {
        static let bundleID = 2
        static let inApp = 17
        static let productID = 1702
        static let transactionID = 1703
        static let originalTransactionID = 1705
    }

    /// `1.2.840.113549.1.7.2` (signedData) and `1.2.840.113549.1.7.1` (data), as their content bytes.
    static let signedDataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    static let dataOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
    static let explicitZero = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)

    public static func read(_ bytes: [UInt8]) throws(AppReceiptError) -> Contents {
        do {
            let payload = try self.payload(of: BER.parse(bytes))
            var contents = Contents(bundleID: nil, purchases: [])
            for (type, value) in try attributes(of: BER.parse(payload)) {
                switch type {
                case Field.bundleID: contents.bundleID = try string(value)
                case Field.inApp: if let purchase = try purchase(value) { contents.purchases.append(purchase) }
                default: continue
                }
            }
            return contents
        } catch let error as AppReceiptError {
            throw error
        } catch {
            throw AppReceiptError("not an app receipt: \(error)")
        }
    }

    /// ContentInfo { signedData, [0] SignedData { version, digests, EncapsulatedContentInfo { data, [0] OCTET STRING } … } }.
    static func payload(of root: ASN1Node) throws -> [UInt8] {
        let info = try children(root, .sequence)
        guard info.count >= 2, try oid(info[0]) == signedDataOID else { throw AppReceiptError("not PKCS#7 signed data") }
        guard let signedData = try children(info[1], explicitZero).first else { throw AppReceiptError("no signed data") }
        let fields = try children(signedData, .sequence)
        guard fields.count >= 3 else { throw AppReceiptError("signed data too short") }
        let encapsulated = try children(fields[2], .sequence)
        guard encapsulated.count == 2, try oid(encapsulated[0]) == dataOID,
              let content = try children(encapsulated[1], explicitZero).first
        else { throw AppReceiptError("no receipt payload") }
        return try octets(content)
    }

    /// SET OF ReceiptAttribute { type INTEGER, version INTEGER, value OCTET STRING }.
    static func attributes(of set: ASN1Node) throws -> [(Int, [UInt8])] {
        try children(set, .set).map { attribute in
            let parts = try children(attribute, .sequence)
            guard parts.count == 3 else { throw AppReceiptError("a receipt attribute is not (type, version, value)") }
            return (try integer(parts[0]), try octets(parts[2]))
        }
    }

    /// An in-app purchase receipt: its own SET of attributes; `nil` without a transaction id.
    static func purchase(_ value: [UInt8]) throws -> Purchase? {
        var transactionID: String?
        var original: String?
        var product: String?
        for (type, field) in try attributes(of: BER.parse(value)) {
            switch type {
            case Field.transactionID: transactionID = try string(field)
            case Field.originalTransactionID: original = try string(field)
            case Field.productID: product = try string(field)
            default: continue
            }
        }
        guard let transactionID, !transactionID.isEmpty else { return nil }
        return Purchase(transactionID: transactionID, originalTransactionID: original, productID: product)
    }

    static func children(_ node: ASN1Node, _ identifier: ASN1Identifier) throws -> [ASN1Node] {
        guard node.identifier == identifier, case .constructed(let nodes) = node.content else {
            throw AppReceiptError("expected \(identifier), found \(node.identifier)")
        }
        return Array(nodes)
    }

    static func oid(_ node: ASN1Node) throws -> [UInt8] {
        guard node.identifier == .objectIdentifier, case .primitive(let bytes) = node.content else { throw AppReceiptError("expected an OID") }
        return Array(bytes)
    }

    /// An OCTET STRING's bytes, whole or (BER) in chunks.
    static func octets(_ node: ASN1Node) throws -> [UInt8] {
        guard node.identifier == .octetString else { throw AppReceiptError("expected an OCTET STRING") }
        switch node.content {
        case .primitive(let bytes): return Array(bytes)
        case .constructed(let chunks): return try chunks.flatMap { try octets($0) }
        }
    }

    /// A small non-negative INTEGER (attribute types are below 2^31).
    static func integer(_ node: ASN1Node) throws -> Int {
        guard node.identifier == .integer, case .primitive(let bytes) = node.content, (1...4).contains(bytes.count),
              bytes.first! & 0x80 == 0
        else { throw AppReceiptError("expected a small INTEGER") }
        return bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    /// A field's value: the DER of a UTF8String (or IA5String), at most 256 bytes.
    static func string(_ value: [UInt8]) throws -> String {
        let node = try BER.parse(value)
        guard node.identifier == .utf8String || node.identifier == .ia5String, case .primitive(let bytes) = node.content,
              bytes.count <= 256, let text = String(validating: bytes, as: UTF8.self)
        else { throw AppReceiptError("expected a short string") }
        return text
    }
}

/// Why a receipt could not be read.
public struct AppReceiptError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
