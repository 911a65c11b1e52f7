import Foundation

/// A validated `POST /v1/receipts` body.
public struct ReceiptSubmission: Sendable, Equatable {
    public var receiptData: String
    public var receiptBytes: [UInt8]
    public var userID: String
    public var productID: String?
    public var transactionID: String?

    /// Parses and validates the body; every refusal says which field and why.
    public static func parse(_ body: [UInt8]) throws(IntakeError) -> ReceiptSubmission {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(body))
        } catch {
            throw IntakeError(.badRequest, "malformed_json", "the body is not valid JSON")
        }
        guard let fields = object as? [String: Any] else {
            throw IntakeError(.badRequest, "malformed_json", "the body must be a JSON object")
        }
        let receiptData = try requiredString(fields, "receipt_data")
        guard !receiptData.isEmpty, let decoded = Data(base64Encoded: receiptData), !decoded.isEmpty else {
            throw IntakeError(.badRequest, "invalid_base64", "receipt_data must be non-empty standard base64")
        }
        let userID = try requiredString(fields, "user_id")
        guard isPrintable(userID) else {
            throw IntakeError(.badRequest, "invalid_user_id", "user_id must be 1 to 128 printable ASCII characters")
        }
        let productID = try optionalString(fields, "product_id")
        if let productID, !isPrintable(productID) {
            throw IntakeError(.badRequest, "invalid_product_id", "product_id must be 1 to 128 printable ASCII characters")
        }
        let transactionID = try optionalString(fields, "transaction_id")
        if let transactionID, !isPrintable(transactionID) {
            throw IntakeError(.badRequest, "invalid_transaction_id", "transaction_id must be 1 to 128 printable ASCII characters")
        }
        return ReceiptSubmission(
            receiptData: receiptData, receiptBytes: Array(decoded), userID: userID, productID: productID,
            transactionID: transactionID)
    }

    private static func requiredString(_ fields: [String: Any], _ name: String) throws(IntakeError) -> String {
        guard let value = fields[name], !(value is NSNull) else {
            throw IntakeError(.badRequest, "missing_field", "\(name) is required")
        }
        guard let text = value as? String, !(value is NSNumber) else {
            throw IntakeError(.badRequest, "wrong_type", "\(name) must be a string")
        }
        return text
    }

    private static func optionalString(_ fields: [String: Any], _ name: String) throws(IntakeError) -> String? {
        guard let value = fields[name], !(value is NSNull) else { return nil }
        guard let text = value as? String, !(value is NSNumber) else {
            throw IntakeError(.badRequest, "wrong_type", "\(name) must be a string")
        }
        return text
    }

    static func isPrintable(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return (1...128).contains(bytes.count) && bytes.allSatisfy { (0x20...0x7E).contains($0) }
    }
}
