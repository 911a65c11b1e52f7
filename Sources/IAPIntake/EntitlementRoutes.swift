import Hummingbird
import PipelineCore
import IAPStages

/// `GET /v1/users/{user_id}/entitlements`: what a user is entitled to now, read from the records
/// the grant and notify stages keep. Needs the product catalog (`IAP_PRODUCTS_FILE`), which names
/// each product's entitlements; without it the answer is `503 entitlements_not_configured`.
package struct EntitlementRoutes: Sendable {
    package let store: PipelineStore
    package let catalog: ProductCatalog?

    package func register(on router: Router<some RequestContext>) {
        router.get("/v1/users/{user_id}/entitlements") { request, context in try await entitlements(request, context: context) }
    }

    func entitlements(_ request: Request, context: some RequestContext) async throws -> Response {
        let user = try NotificationRoutes.user(context)
        guard let catalog else {
            throw IntakeError(
                .serviceUnavailable, "entitlements_not_configured", "this intake has no product catalog (IAP_PRODUCTS_FILE)")
        }
        let found: UserEntitlements
        do {
            found = try await store.entitlements(user: user, catalog: catalog)
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "Redis does not answer; try again")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: found.encoded())))
    }
}
