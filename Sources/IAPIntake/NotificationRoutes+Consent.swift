import AppStoreServerAPI
import Hummingbird
import PipelineCore
import IAPStages
import NIOCore
import PlainJSON

extension NotificationRoutes {
    /// `PUT /v1/users/{user_id}/consent` `{"consented": true|false}`: whether the user agreed that
    /// we tell Apple about their purchases when they ask for a refund (`CONSUMPTION_REQUEST`).
    /// Without a `true` here, nothing about the user is ever sent.
    func setConsent(_ request: Request, context: some RequestContext) async throws -> Response {
        let user = try Self.user(context)
        let fields = try await IntakeRoutes.jsonFields(request, maxBodyBytes: maxBodyBytes)
        guard let value = fields["consented"], value != .null else {
            throw IntakeError(.badRequest, "missing_field", "consented is required")
        }
        guard case .bool(let consented) = value else {
            throw IntakeError(.badRequest, "wrong_type", "consented must be true or false")
        }
        do {
            try await store.setConsent(user: user, consented: consented)
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "the consent could not be stored; try again")
        }
        return json(.ok, JSONValue.object(["user_id": .string(user), "consented": .bool(consented)]))
    }

    /// `PUT /v1/users/{user_id}/purchases/{transaction_id}/consumption`
    /// `{"delivery_status": "DELIVERED" | "UNDELIVERED_…", "consumption_percentage": 0…100000}`: what
    /// the game knows of a purchase (delivered or why not, how much of it was used, in milliunits),
    /// sent to Apple when the customer asks for a refund (and consented). Replaces what was said before.
    func recordConsumption(_ request: Request, context: some RequestContext) async throws -> Response {
        let user = try Self.user(context)
        let transactionID = context.parameters.get("transaction_id") ?? ""
        guard ReceiptSubmission.isPrintable(transactionID) else {
            throw IntakeError(.badRequest, "invalid_transaction_id", "transaction_id must be 1 to 128 printable ASCII characters")
        }
        let fields = try await IntakeRoutes.jsonFields(request, maxBodyBytes: maxBodyBytes)
        let statuses = ConsumptionInformation.DeliveryStatus.allCases.map(\.rawValue)
        guard let statusValue = fields["delivery_status"], statusValue != .null else {
            throw IntakeError(.badRequest, "missing_field", "delivery_status is required")
        }
        guard case .string(let statusText) = statusValue else {
            throw IntakeError(.badRequest, "wrong_type", "delivery_status must be a string")
        }
        guard let status = ConsumptionInformation.DeliveryStatus(rawValue: statusText) else {
            throw IntakeError(.badRequest, "invalid_delivery_status", "delivery_status must be one of \(statuses.joined(separator: ", "))")
        }
        var percentage: Int?
        if let value = fields["consumption_percentage"], value != .null {
            guard case .number = value else {
                throw IntakeError(.badRequest, "wrong_type", "consumption_percentage must be a whole number")
            }
            guard let whole = value.int, (0...100_000).contains(whole) else {
                throw IntakeError(
                    .badRequest, "invalid_consumption_percentage",
                    "consumption_percentage is in milliunits: a whole number from 0 (nothing used) to 100000 (all of it)")
            }
            guard status == .delivered || whole == 0 else {
                throw IntakeError(
                    .badRequest, "invalid_consumption_percentage",
                    "consumption_percentage must be 0 unless delivery_status is DELIVERED (Apple refuses anything else)")
            }
            percentage = whole
        }
        let recorded = PipelineStore.RecordedConsumption(deliveryStatus: status, percentage: percentage)
        do {
            try await store.recordConsumption(recorded, user: user, transactionID: transactionID)
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "the consumption could not be stored; try again")
        }
        return json(.ok, JSONValue.members([
            "user_id": .string(user), "transaction_id": .string(transactionID), "delivery_status": .string(status.rawValue),
            "consumption_percentage": percentage.map { .int($0) },
        ]))
    }
}
