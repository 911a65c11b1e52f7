import AppleJWS
import IAPSettings
import Logging
import PipelineCore

/// How an App Store Server Notification enters the pipeline, wherever its `signedPayload` comes
/// from: Apple's POST to the intake, a backfill from Get Notification History, the standing sweep.
/// Every signature is checked (the notification's, its transaction's, its renewal info's, its app
/// transaction's) and every member must be about this app; then `accept_notification` stores it
/// once by its `notificationUUID` (a second time is `seen_before`).
package struct NotificationAdmission: Sendable {
    package let verifier: SignedDataVerifier
    package let bundleIDs: Set<String>
    /// `IAP_APPLE_APP_ID`: checked on production members when set.
    package let appAppleID: Int64?
    /// Per app (`app_apple_id` in `IAP_APPS_FILE`): checked instead of `appAppleID` on that app's members.
    package let appAppleIDs: [String: Int64]
    package let store: PipelineStore
    package let ticketTTL: Duration

    package init(
        verifier: SignedDataVerifier, bundleIDs: Set<String>, appAppleID: Int64?, appAppleIDs: [String: Int64] = [:],
        store: PipelineStore, ticketTTL: Duration
    ) {
        self.verifier = verifier
        self.bundleIDs = bundleIDs
        self.appAppleID = appAppleID
        self.appAppleIDs = appAppleIDs
        self.store = store
        self.ticketTTL = ticketTTL
    }

    /// From the pipeline's settings (roots, `IAP_BUNDLE_IDS`, `IAP_APPLE_APP_ID`); `nil` without
    /// bundle ids: nothing can be checked, so nothing is admitted.
    package static func make(_ configuration: PipelineConfiguration, store: PipelineStore) throws(ConfigurationError) -> NotificationAdmission? {
        guard !configuration.bundleIDs.isEmpty else { return nil }
        let online = configuration.appleOnlineChecks ? SignedDataVerifier.OnlineChecks(requester: OCSPHTTPRequester.make()) : nil
        return NotificationAdmission(
            verifier: SignedDataVerifier(rootCertificates: try configuration.rootCertificates(), online: online),
            bundleIDs: configuration.bundleIDs,
            appAppleID: configuration.appleAppID, appAppleIDs: configuration.appAppleIDs, store: store,
            ticketTTL: configuration.ticketTTL)
    }

    /// A stored notification: its ticket, and whether this call stored it (`false`: `seen_before`).
    package struct Admitted: Sendable, Equatable {
        package var ticket: String
        package var created: Bool
        package var notification: VerifiedNotification
    }

    /// Verifies `signedPayload` and stores it. Throws `NotificationRefusal` for what must never be
    /// stored, and the store's error (`RedisError`) when Redis cannot take it now.
    package func admit(_ signedPayload: String, logger: Logger) async throws -> Admitted {
        let verified = try await verify(signedPayload, logger: logger)
        let job = Job(
            ticket: TicketID.make(), stage: .notify, userID: "", work: .notification(verified), source: "notification",
            enqueuedAt: currentTimeMs())
        let stored = try await store.acceptNotification(job, uuid: verified.uuid, ttl: ticketTTL)
        return Admitted(ticket: stored.ticket, created: stored.created, notification: verified)
    }

    /// The notification and what it carries, every signature checked; a precise refusal otherwise.
    package func verify(_ signedPayload: String, logger: Logger) async throws(NotificationRefusal) -> VerifiedNotification {
        func refuse(_ what: String, _ error: SignedDataError) -> NotificationRefusal {
            logger.warning("notification refused: \(what) does not verify", metadata: ["cause": "\(error)"])
            return NotificationRefusal(.invalidSignature, "\(what) does not verify: \(error)")
        }
        let payload: NotificationPayload
        var signed: SignedPayloads
        do {
            let verified = try await verifier.verifyKeepingPayload(signedPayload, as: NotificationPayload.self)
            (payload, signed) = (verified.payload, SignedPayloads(notification: verified.signed))
        } catch {
            throw refuse("the notification", error)
        }
        var transaction: JWSTransaction?
        var renewal: JWSRenewalInfo?
        var appTransaction: JWSAppTransaction?
        if let jws = payload.data?.signedTransactionInfo {
            do { (transaction, signed.transaction) = try await verifier.verifyKeepingPayload(jws, as: JWSTransaction.self) } catch {
                throw refuse("signedTransactionInfo", error)
            }
        }
        if let jws = payload.data?.signedRenewalInfo {
            do { (renewal, signed.renewal) = try await verifier.verifyKeepingPayload(jws, as: JWSRenewalInfo.self) } catch {
                throw refuse("signedRenewalInfo", error)
            }
        }
        if let jws = payload.appData?.signedAppTransactionInfo {
            do { (appTransaction, signed.appTransaction) = try await verifier.verifyKeepingPayload(jws, as: JWSAppTransaction.self) } catch {
                throw refuse("signedAppTransactionInfo", error)
            }
        }
        do {
            try checkApp(payload, transaction: transaction, renewal: renewal, appTransaction: appTransaction)
        } catch {
            logger.warning("notification refused", metadata: ["code": "\(error.code.rawValue)", "reason": "\(error.message)"])
            throw error
        }
        var verified = VerifiedNotification(payload, transaction: transaction, renewal: renewal, appTransaction: appTransaction)
        verified.whole = signed.whole
        return verified
    }

    /// Whichever member the notification carries (`data`, `summary`, `appData`,
    /// `externalPurchaseToken`; a notification with none is refused) and whatever is signed inside
    /// it must be about this app: every bundle id in `IAP_BUNDLE_IDS` (a member that names none is
    /// refused too), in production the App Apple ID `IAP_APPLE_APP_ID` when set (on the app
    /// transaction too; an external purchase token is production's unless its id starts
    /// `SANDBOX`), and a member's environment that of the transaction, renewal or app transaction
    /// it carries.
    func checkApp(
        _ payload: NotificationPayload, transaction: JWSTransaction?, renewal: JWSRenewalInfo?, appTransaction: JWSAppTransaction?
    ) throws(NotificationRefusal) {
        let apps = payload.apps
        guard !apps.isEmpty else {
            throw NotificationRefusal(.noAppMember, "the notification carries none of data, summary, appData, externalPurchaseToken")
        }
        let signedBundles: [String] = [transaction?.bundleID, appTransaction?.bundleID].compactMap { $0 }
        let bundles: [String?] = apps.map(\.bundleID) + signedBundles.map(Optional.some)
        for bundle in bundles where bundle.map(bundleIDs.contains) != true {
            throw NotificationRefusal(
                .bundleMismatch, "the notification is for a bundle id not in IAP_BUNDLE_IDS (\((bundle ?? "none").prefix(128)))")
        }
        // Every production member, the app transaction it carries included (Apple signs its
        // appAppleId in production only), names its app's App Apple ID.
        let members = apps + (appTransaction.map { [($0.bundleID, $0.appAppleID, $0.environment)] } ?? [])
        for app in members where app.environment == "Production" {
            if let expected = app.bundleID.flatMap({ appAppleIDs[$0] }) ?? appAppleID, app.appAppleID != expected {
                throw NotificationRefusal(
                    .appAppleIDMismatch, "the notification's appAppleId is not its app's (IAP_APPLE_APP_ID, or app_apple_id in IAP_APPS_FILE)")
            }
        }
        let signed = [transaction?.environment, renewal?.environment, appTransaction?.environment].compactMap { $0 }
        for app in apps {
            guard let environment = app.environment else { continue }
            if let other = signed.first(where: { $0 != environment }) {
                throw NotificationRefusal(
                    .environmentMismatch, "the notification says \(environment.prefix(32)) but what it carries was signed for \(other.prefix(32))")
            }
        }
    }
}
