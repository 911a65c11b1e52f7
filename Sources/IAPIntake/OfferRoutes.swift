import Hummingbird
import IAPOperations
import PlainJSON

/// `POST /v1/offers/signatures` `{user_id, product_id, kind, offer_id?, bundle_id?, transaction_id?,
/// app_transaction_id?}`: the signature StoreKit needs to apply a promotional offer
/// (`promotional`, `promotional_v2`) or to set a product's introductory offer eligibility
/// (`introductory_eligibility`), made only for a user the catalog's rule allows (`OfferSignatures`).
package struct OfferRoutes: Sendable {
    /// `nil`: no catalog here (every request answers 503 offers_not_configured).
    package let signatures: OfferSignatures?
    package let maxBodyBytes: Int

    package func register(on router: Router<some RequestContext>) {
        router.post("/v1/offers/signatures") { request, _ in try await sign(request) }
    }

    func sign(_ request: Request) async throws -> Response {
        let buffer = try await IntakeRoutes.body(request, maxBodyBytes: maxBodyBytes)
        let parsed = try Self.parse(Array(buffer.readableBytesView))
        guard let signatures else {
            throw IntakeError(
                .serviceUnavailable, "offers_not_configured", "this intake has no product catalog (IAP_PRODUCTS_FILE) to read offers from")
        }
        switch await signatures.sign(parsed) {
        case .success(let answer):
            return json(.ok, answer.json)
        case .failure(let refusal):
            let status: HTTPResponse.Status = switch refusal.kind {
            case .badRequest: .badRequest
            case .notEligible: .forbidden
            case .unavailable: .serviceUnavailable
            }
            throw IntakeError(status, refusal.code, refusal.message)
        }
    }

    static func parse(_ body: [UInt8]) throws(IntakeError) -> OfferSignatures.Request {
        let fields = try IntakeRoutes.jsonFields(body)
        func text(_ name: String, required: Bool = false, code: String) throws(IntakeError) -> String? {
            guard let value = fields[name], value != .null else {
                if required { throw IntakeError(.badRequest, "missing_field", "\(name) is required") }
                return nil
            }
            guard case .string(let text) = value else { throw IntakeError(.badRequest, "wrong_type", "\(name) must be a string") }
            guard ReceiptSubmission.isPrintable(text) else {
                throw IntakeError(.badRequest, code, "\(name) must be 1 to 128 printable ASCII characters")
            }
            return text
        }
        let userID = try text("user_id", required: true, code: "invalid_user_id")!
        let productID = try text("product_id", required: true, code: "invalid_product_id")!
        let kindName = try text("kind", required: true, code: "invalid_kind")!
        guard let kind = OfferSignatures.Kind(rawValue: kindName) else {
            throw IntakeError(
                .badRequest, "invalid_kind",
                "kind must be one of \(OfferSignatures.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return OfferSignatures.Request(
            userID: userID, productID: productID, kind: kind, offerID: try text("offer_id", code: "invalid_offer_id"),
            bundleID: try text("bundle_id", code: "unknown_bundle_id"), transactionID: try text("transaction_id", code: "invalid_transaction_id"),
            appTransactionID: try text("app_transaction_id", code: "invalid_app_transaction_id"))
    }
}
