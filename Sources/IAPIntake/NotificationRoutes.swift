import AppleJWS
import Foundation
import Hummingbird
import IAPPipeline
import Logging
import RedisClient
import NIOCore

/// The URL given to Apple for App Store Server Notifications V2, and the endpoint that tells us
/// which user an `appAccountToken` belongs to. A notification is verified here, at the door (its
/// own signature, its transaction's and its renewal info's), so a forged one never reaches a queue.
public struct NotificationRoutes: Sendable {
    public let store: PipelineStore
    /// `nil` while the intake has no bundle ids: notifications are then refused with 503 (Apple retries).
    public let checks: Checks?
    public let maxBodyBytes: Int
    public let ticketTTL: Duration

    /// What a notification must satisfy beyond its signature.
    public struct Checks: Sendable {
        public var verifier: SignedDataVerifier
        public var bundleIDs: Set<String>
        public var appAppleID: Int64?

        public init(verifier: SignedDataVerifier, bundleIDs: Set<String>, appAppleID: Int64?) {
            self.verifier = verifier
            self.bundleIDs = bundleIDs
            self.appAppleID = appAppleID
        }
    }

    public init(store: PipelineStore, checks: Checks?, maxBodyBytes: Int, ticketTTL: Duration) {
        self.store = store
        self.checks = checks
        self.maxBodyBytes = maxBodyBytes
        self.ticketTTL = ticketTTL
    }

    public func register(on router: Router<some RequestContext>) {
        router.post("/v1/notifications/apple") { request, context in try await notification(request, context: context) }
        router.put("/v1/users/{user_id}/app-account-token") { request, context in try await bindToken(request, context: context) }
        router.put("/v1/users/{user_id}/consent") { request, context in try await setConsent(request, context: context) }
    }

    func notification(_ request: Request, context: some RequestContext) async throws -> Response {
        let fields = try await IntakeRoutes.jsonObject(request, maxBodyBytes: maxBodyBytes)
        guard let value = fields["signedPayload"], !(value is NSNull) else {
            throw IntakeError(.badRequest, "missing_field", "signedPayload is required")
        }
        guard let signedPayload = value as? String, !(value is NSNumber) else {
            throw IntakeError(.badRequest, "wrong_type", "signedPayload must be a string")
        }
        guard Base64URL.isCompactJWS(signedPayload) else {
            throw IntakeError(.badRequest, "invalid_jws", "signedPayload must be a compact JWS: three base64url segments")
        }
        guard let checks else {
            context.logger.critical("a notification arrived but IAP_BUNDLE_IDS is not set on the intake: refused, Apple will retry")
            throw IntakeError(.serviceUnavailable, "notifications_not_configured", "this intake cannot check notifications yet")
        }
        let verified = try await verify(signedPayload, checks: checks, logger: context.logger)
        var job = Job(
            ticket: TicketID.make(), userID: "", receiptData: nil, productID: nil, transactionID: nil, enqueuedAt: currentTimeMs())
        job.stage = .notify
        job.source = "notification"
        job.notification = verified
        let stored: (ticket: String, created: Bool)
        do {
            stored = try await store.acceptNotification(job, uuid: verified.uuid, ttl: ticketTTL)
        } catch RedisError.notReplicated(let detail) {
            context.logger.warning("a notification is not replicated yet", metadata: ["detail": "\(detail)"])
            throw IntakeError(.serviceUnavailable, "not_replicated", "the notification is not yet on enough Redis replicas; Apple will retry")
        } catch {
            context.logger.error("cannot store a notification", metadata: ["error": "\(error)"])
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "the notification could not be stored; Apple will retry")
        }
        context.logger.info("notification accepted", metadata: [
            "type": "\(verified.type)", "uuid": "\(verified.uuid)", "new": "\(stored.created)",
        ])
        return json(.ok, ["ticket": stored.ticket, "status": stored.created ? "accepted" : "seen_before"])
    }

    /// The notification and what it carries, every signature checked; a precise refusal otherwise.
    func verify(_ signedPayload: String, checks: Checks, logger: Logger) async throws -> VerifiedNotification {
        func refuse(_ what: String, _ error: SignedDataError) -> IntakeError {
            logger.warning("notification refused: \(what) does not verify", metadata: ["cause": "\(error)"])
            return IntakeError(.unauthorized, "invalid_signature", "\(what) does not verify: \(error)")
        }
        let payload: NotificationPayload
        do {
            payload = try await checks.verifier.verify(signedPayload, as: NotificationPayload.self)
        } catch {
            throw refuse("the notification", error)
        }
        var transaction: JWSTransaction?
        var renewal: JWSRenewalInfo?
        if let signed = payload.data?.signedTransactionInfo {
            do { transaction = try await checks.verifier.verify(signed, as: JWSTransaction.self) } catch { throw refuse("signedTransactionInfo", error) }
        }
        if let signed = payload.data?.signedRenewalInfo {
            do { renewal = try await checks.verifier.verify(signed, as: JWSRenewalInfo.self) } catch { throw refuse("signedRenewalInfo", error) }
        }
        var appTransaction: JWSAppTransaction?
        if let signed = payload.appData?.signedAppTransactionInfo {
            do { appTransaction = try await checks.verifier.verify(signed, as: JWSAppTransaction.self) } catch {
                throw refuse("signedAppTransactionInfo", error)
            }
        }
        try Self.checkApp(payload, transaction: transaction, renewal: renewal, appTransaction: appTransaction, checks: checks, logger: logger)
        return VerifiedNotification(payload, transaction: transaction, renewal: renewal)
    }

    /// Whichever member the notification carries (`data`, `summary`, `appData`,
    /// `externalPurchaseToken`) and whatever is signed inside it must be about this app: every bundle
    /// id in `IAP_BUNDLE_IDS` (a member that names none is refused too), in production the App Apple
    /// ID `IAP_APPLE_APP_ID` when set, and a member's environment that of the transaction, renewal
    /// or app transaction it carries.
    static func checkApp(
        _ payload: NotificationPayload, transaction: JWSTransaction?, renewal: JWSRenewalInfo?, appTransaction: JWSAppTransaction?,
        checks: Checks, logger: Logger
    ) throws(IntakeError) {
        let apps = payload.apps
        let signedBundles: [String] = [transaction?.bundleID, appTransaction?.bundleID].compactMap { $0 }
        let bundles: [String?] = apps.map(\.bundleID) + signedBundles.map(Optional.some)
        for bundle in bundles where bundle.map(checks.bundleIDs.contains) != true {
            logger.warning("notification for another app refused", metadata: ["bundle_id": "\((bundle ?? "none").prefix(128))"])
            throw IntakeError(.badRequest, "bundle_mismatch", "the notification is for a bundle id not in IAP_BUNDLE_IDS")
        }
        for app in apps where app.environment == "Production" {
            if let expected = checks.appAppleID, app.appAppleID != expected {
                throw IntakeError(.badRequest, "app_apple_id_mismatch", "the notification's appAppleId is not IAP_APPLE_APP_ID")
            }
        }
        let signed = [transaction?.environment, renewal?.environment, appTransaction?.environment].compactMap { $0 }
        for app in apps {
            guard let environment = app.environment else { continue }
            if let other = signed.first(where: { $0 != environment }) {
                throw IntakeError(
                    .badRequest, "environment_mismatch",
                    "the notification says \(environment.prefix(32)) but what it carries was signed for \(other.prefix(32))")
            }
        }
    }

    /// The user id of a `/v1/users/{user_id}/…` path, or 400 `invalid_user_id`.
    static func user(_ context: some RequestContext) throws(IntakeError) -> String {
        // The path carries the user id percent-encoded; a malformed escape leaves it empty (refused).
        let user = context.parameters.get("user_id")?.removingPercentEncoding ?? ""
        guard ReceiptSubmission.isPrintable(user) else {
            throw IntakeError(.badRequest, "invalid_user_id", "user_id must be 1 to 128 printable ASCII characters")
        }
        return user
    }

    func bindToken(_ request: Request, context: some RequestContext) async throws -> Response {
        let user = try Self.user(context)
        let fields = try await IntakeRoutes.jsonObject(request, maxBodyBytes: maxBodyBytes)
        guard let value = fields["app_account_token"], !(value is NSNull) else {
            throw IntakeError(.badRequest, "missing_field", "app_account_token is required")
        }
        guard let text = value as? String, !(value is NSNumber) else {
            throw IntakeError(.badRequest, "wrong_type", "app_account_token must be a string")
        }
        guard let token = UUID(uuidString: text)?.uuidString.lowercased() else {
            throw IntakeError(.badRequest, "invalid_app_account_token", "app_account_token must be a UUID")
        }
        let bound: String
        do {
            bound = try await store.bindAccountToken(token, to: user)
        } catch {
            throw IntakeError(.serviceUnavailable, "redis_unavailable", "the token could not be stored; try again")
        }
        guard bound == user else {
            throw IntakeError(.conflict, "app_account_token_taken", "this app_account_token belongs to another user")
        }
        return json(.ok, ["user_id": user, "app_account_token": token])
    }
}
