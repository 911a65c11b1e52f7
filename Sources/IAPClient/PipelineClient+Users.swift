import Foundation
import PlainJSON

/// One entitlement a user holds now (`GET /v1/users/{id}/entitlements`).
public struct Entitlement: Sendable, Equatable {
    public let entitlement: String
    public let productID: String
    /// `active` or `grace_period`.
    public let status: String
    /// ISO 8601, for a subscription.
    public let expiresAt: String?
    public let originalTransactionID: String?
    /// A grant for a time's id (`grantForATime`): then there is no product, and `expiresAt` is its end.
    public let grantID: String?
}

/// What the game knows of one purchase, for Apple's consumption request.
public enum DeliveryStatus: String, Sendable, CaseIterable {
    case delivered = "DELIVERED"
    case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
    case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
    case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
    case undeliveredOther = "UNDELIVERED_OTHER"
}

extension PipelineClient {
    public func entitlements(of user: String) async throws -> [Entitlement] {
        let json = try await call(.GET, "\(Self.userPath(user))/entitlements").json
        return (json["entitlements"]?.array ?? []).map { item in
            Entitlement(
                entitlement: item["entitlement"]?.string ?? "", productID: item["product_id"]?.string ?? "",
                status: item["status"]?.string ?? "", expiresAt: item["expires_at"]?.string,
                originalTransactionID: item["original_transaction_id"]?.string, grantID: item["grant_id"]?.string)
        }
    }

    /// `POST /v1/users/{id}/grants`: `entitlement` given to the user for `duration` (at most a
    /// year), once per `grantID`: the grant as the intake answers it (`until`, `status`, …).
    public func grantForATime(
        _ entitlement: String, to user: String, for duration: Duration, grantID: String, reason: String
    ) async throws -> JSONValue {
        let body = JSONValue.members([
            "grant_id": .string(grantID), "entitlement": .string(entitlement), "duration_s": .int(Int(duration.components.seconds)),
            "reason": .string(reason),
        ])
        return try await call(.POST, "\(Self.userPath(user))/grants", body: body).json
    }

    /// `DELETE /v1/users/{id}/grants/{grant_id}`: the grant taken back before its end.
    public func takeBackGrant(_ grantID: String, from user: String) async throws -> JSONValue {
        try await call(.DELETE, "\(Self.userPath(user))/grants/\(Self.segment(grantID))").json
    }

    /// `GET /v1/users/{id}`: the user's purchases (newest first, a page), subscriptions, refunds,
    /// Apple Accounts, consent and token, as the intake answers them.
    public func user(_ user: String, limit: Int? = nil, before: String? = nil) async throws -> JSONValue {
        let query = [limit.map { "limit=\($0)" }, before.map { "before=\(Self.segment($0))" }].compactMap { $0 }
        return try await call(.GET, Self.userPath(user) + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))).json
    }

    /// `PUT /v1/users/{id}/app-account-token`: the token the app passes to StoreKit for this user.
    public func setAppAccountToken(_ token: UUID, for user: String) async throws {
        _ = try await call(.PUT, "\(Self.userPath(user))/app-account-token", body: .object(["app_account_token": .string(token.uuidString.lowercased())]))
    }

    /// `POST /v1/users/{id}/sync` at login: every purchase Apple has of the user's Apple Account
    /// that the books do not know is granted to them.
    public func sync(_ user: String, signedAppTransaction: String) async throws -> Submission {
        try Self.submission(await call(.POST, "\(Self.userPath(user))/sync", body: .object(["signed_app_transaction": .string(signedAppTransaction)])))
    }

    /// `PUT /v1/users/{id}/consent`: whether Apple may be told about the user's purchases when
    /// they ask it for a refund.
    public func setConsent(_ consented: Bool, for user: String) async throws {
        _ = try await call(.PUT, "\(Self.userPath(user))/consent", body: .object(["consented": .bool(consented)]))
    }

    /// `PUT /v1/users/{id}/purchases/{transaction}/consumption`; `percentage` in milliunits (0 to 100000).
    public func setConsumption(
        _ status: DeliveryStatus, percentage: Int? = nil, transactionID: String, for user: String
    ) async throws {
        let body = JSONValue.members(["delivery_status": .string(status.rawValue), "consumption_percentage": percentage.map { .int($0) }])
        _ = try await call(.PUT, "\(Self.userPath(user))/purchases/\(Self.segment(transactionID))/consumption", body: body)
    }

    /// `GET /v1/users/{id}/spend?since=`: spent, refunded and net per currency, in milliunits.
    public func spend(of user: String, since: String) async throws -> JSONValue {
        try await call(.GET, "\(Self.userPath(user))/spend?since=\(Self.segment(since))").json
    }

    /// `DELETE /v1/users/{id}`: erases the user; safe to repeat.
    public func erase(_ user: String) async throws -> JSONValue {
        try await call(.DELETE, Self.userPath(user)).json
    }

    /// `POST /v1/offers/signatures`: `kind` `promotional`, `promotional_v2` or
    /// `introductory_eligibility`; the answer is what StoreKit takes (docs/http-api.md).
    public func offerSignature(
        kind: String, for user: String, productID: String, offerID: String? = nil, transactionID: String? = nil,
        appTransactionID: String? = nil, bundleID: String? = nil
    ) async throws -> JSONValue {
        let body = JSONValue.members([
            "kind": .string(kind), "user_id": .string(user), "product_id": .string(productID), "offer_id": offerID.json,
            "transaction_id": transactionID.json, "app_transaction_id": appTransactionID.json, "bundle_id": bundleID.json,
        ])
        return try await call(.POST, "/v1/offers/signatures", body: body).json
    }

    static func userPath(_ user: String) -> String { "/v1/users/\(segment(user))" }
}
