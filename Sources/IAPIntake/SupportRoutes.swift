import Hummingbird
import IAPOperations
import PlainJSON

/// `GET /v1/support/orders/{order_id}` and `GET /v1/support/transactions/{transaction_id}`: a
/// purchase looked up at Apple (Look Up Order ID, Get Transaction Info), verified, and read in
/// the books (`SupportLookup`). The one place the intake calls Apple, within the fleet's Server
/// API budget. Only a client key scoped `support` may call them; an intake without client keys
/// refuses them.
package struct SupportRoutes: Sendable {
    package let lookup: SupportLookup?
    /// Whether requests are signed (`IAP_CLIENT_KEYS_FILE`): the signature middleware checks the
    /// key's `support` scope; without keys nobody may call these routes.
    package let signed: Bool

    package func register(on router: Router<some RequestContext>) {
        router.get("/v1/support/orders/{order_id}") { _, context in
            let lookup = try ready()
            return try Self.answer(await lookup.order(context.parameters.get("order_id") ?? ""))
        }
        router.get("/v1/support/transactions/{transaction_id}") { _, context in
            let lookup = try ready()
            return try Self.answer(await lookup.transaction(context.parameters.get("transaction_id") ?? ""))
        }
    }

    private func ready() throws(IntakeError) -> SupportLookup {
        guard signed else {
            throw IntakeError(
                .forbidden, "forbidden_scope", "the support routes need IAP_CLIENT_KEYS_FILE and a key scoped support")
        }
        guard let lookup else {
            throw IntakeError(
                .serviceUnavailable, "support_not_configured",
                "this intake has no App Store Server API key (IAP_APPLE_API_KEY_ID, IAP_APPLE_API_ISSUER_ID, IAP_APPLE_API_PRIVATE_KEY_FILE)")
        }
        return lookup
    }

    static func answer(_ result: Result<SupportLookup.Answer, SupportLookup.Failure>) throws(IntakeError) -> Response {
        switch result {
        case .success(let answer):
            return json(.ok, answer.json)
        case .failure(let failure):
            let status: HTTPResponse.Status = switch failure.kind {
            case .invalidID: .badRequest
            case .notFound: .notFound
            case .apple(let transient): transient ? .serviceUnavailable : .badGateway
            case .redis: .serviceUnavailable
            }
            // Apple was asked (its budget spent) unless the id was refused at once.
            var spent = true
            if case .invalidID = failure.kind { spent = false }
            throw IntakeError(status, failure.code, failure.message, spent: spent)
        }
    }
}
