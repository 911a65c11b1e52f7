import AppleJWS
import IAPStages
import Foundation
import PlainJSON

/// A validated `POST /v1/receipts` body: exactly one piece of evidence, and who sent it.
package struct ReceiptSubmission: Sendable, Equatable {
    package var evidence: Evidence
    package var userID: String
    package var productID: String?
    package var transactionID: String?
    /// The currency the client says a legacy receipt was paid in (ISO 4217), for `IAP_CURRENCIES`;
    /// ignored for signed evidence, which carries Apple's.
    package var currency: String?
    /// The app the client says it is (`bundle_id`): Apple is asked with that app's secret or key
    /// alone, and what it answers must be of that app.
    package var bundleID: String?

    package enum Evidence: Sendable, Equatable {
        /// A legacy app receipt: the base64 text and its bytes.
        case receipt(base64: String, bytes: [UInt8])
        /// A StoreKit 2 signed transaction, shaped like a compact JWS (verified by the verify stage).
        case signedTransaction(String)
        /// A StoreKit `AppTransaction` (compact JWS): binds its Apple Account to the user, grants nothing.
        case appTransaction(String)
        /// Only `transaction_id`: the verify stage asks the App Store Server API.
        case transactionLookup(String)
    }

    /// Parses and validates the body; every refusal says which field and why.
    /// `serverAPIConfigured`: whether a `transaction_id`-only submission can be looked up;
    /// `bundleIDs`: the apps a `bundle_id` may name (empty: any, the verifier checks).
    package static func parse(
        _ body: [UInt8], serverAPIConfigured: Bool = false, bundleIDs: Set<String> = []
    ) throws(IntakeError) -> ReceiptSubmission {
        let fields = try IntakeRoutes.jsonFields(body)
        var submission = try parseEvidence(fields, serverAPIConfigured: serverAPIConfigured)
        if let bundleID = try optionalString(fields, "bundle_id") {
            guard isPrintable(bundleID), bundleIDs.isEmpty || bundleIDs.contains(bundleID) else {
                throw IntakeError(.badRequest, "unknown_bundle_id", "bundle_id must name one of this deployment's apps")
            }
            submission.bundleID = bundleID
        }
        return submission
    }

    private static func parseEvidence(
        _ fields: JSONObject, serverAPIConfigured: Bool
    ) throws(IntakeError) -> ReceiptSubmission {
        let receiptData = try optionalString(fields, "receipt_data")
        let signedTransaction = try optionalString(fields, "signed_transaction")
        let signedAppTransaction = try optionalString(fields, "signed_app_transaction")
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
        let currency = try optionalString(fields, "currency")
        if let currency, !PurchasePolicy.isCurrencyCode(currency) {
            throw IntakeError(.badRequest, "invalid_currency", "currency must be an ISO 4217 code: three upper-case letters, like USD")
        }
        let evidence: Evidence
        if let signedAppTransaction {
            guard receiptData == nil, signedTransaction == nil else {
                throw IntakeError(
                    .badRequest, "conflicting_fields", "send one of receipt_data, signed_transaction or signed_app_transaction")
            }
            guard Base64URL.isCompactJWS(signedAppTransaction) else {
                throw IntakeError(
                    .badRequest, "invalid_jws", "signed_app_transaction must be a compact JWS: three base64url segments")
            }
            return ReceiptSubmission(
                evidence: .appTransaction(signedAppTransaction), userID: userID, productID: productID, transactionID: transactionID,
                currency: currency)
        }
        switch (receiptData, signedTransaction) {
        case (.some, .some):
            throw IntakeError(.badRequest, "conflicting_fields", "send receipt_data or signed_transaction, not both")
        case (let receiptData?, nil):
            guard !receiptData.isEmpty, let decoded = Data(base64Encoded: receiptData), !decoded.isEmpty else {
                throw IntakeError(.badRequest, "invalid_base64", "receipt_data must be non-empty standard base64")
            }
            evidence = .receipt(base64: receiptData, bytes: Array(decoded))
        case (nil, let jws?):
            guard Base64URL.isCompactJWS(jws) else {
                throw IntakeError(.badRequest, "invalid_jws", "signed_transaction must be a compact JWS: three base64url segments")
            }
            evidence = .signedTransaction(jws)
        case (nil, nil):
            guard let transactionID else {
                throw IntakeError(
                    .badRequest, "missing_field", "one of receipt_data, signed_transaction, signed_app_transaction or transaction_id is required")
            }
            guard serverAPIConfigured else {
                throw IntakeError(
                    .badRequest, "server_api_not_configured",
                    "a transaction_id alone needs the App Store Server API, which this deployment has not configured")
            }
            evidence = .transactionLookup(transactionID)
        }
        return ReceiptSubmission(
            evidence: evidence, userID: userID, productID: productID, transactionID: transactionID, currency: currency)
    }

    /// The bytes that identify this submission's evidence for one user; each kind is tagged so no
    /// two kinds can meet (a receipt keeps the untagged form it always had).
    var evidenceBytes: [UInt8] {
        switch evidence {
        case .receipt(_, let bytes): return bytes
        case .signedTransaction(let jws): return Array("signed_transaction".utf8) + [0] + Array(jws.utf8)
        case .appTransaction(let jws): return Array("signed_app_transaction".utf8) + [0] + Array(jws.utf8)
        case .transactionLookup(let id): return Array("transaction_id".utf8) + [0] + Array(id.utf8)
        }
    }

    /// A field that must be a string: 400 `missing_field` or `wrong_type` otherwise.
    static func requiredString(_ fields: JSONObject, _ name: String) throws(IntakeError) -> String {
        guard let text = try optionalString(fields, name) else {
            throw IntakeError(.badRequest, "missing_field", "\(name) is required")
        }
        return text
    }

    /// A field that may be absent or null, else a string: 400 `wrong_type` otherwise.
    static func optionalString(_ fields: JSONObject, _ name: String) throws(IntakeError) -> String? {
        guard let value = fields[name], value != .null else { return nil }
        guard case .string(let text) = value else {
            throw IntakeError(.badRequest, "wrong_type", "\(name) must be a string")
        }
        return text
    }

    static func isPrintable(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return (1...128).contains(bytes.count) && bytes.allSatisfy { (0x20...0x7E).contains($0) }
    }
}
