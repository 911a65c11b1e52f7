import AppleJWS

/// An App Store Server Notification V2 whose signature (and its transaction's and renewal info's)
/// the intake verified at the door: what the notify stage applies.
package struct VerifiedNotification: Codable, Sendable, Equatable {
    package var type: String
    package var subtype: String?
    package var uuid: String
    package var signedDate: Int64?
    package var environment: String?
    package var bundleID: String?
    package var transaction: JWSTransaction?
    package var renewal: JWSRenewalInfo?
    /// `appData`'s signed app transaction (`RESCIND_CONSENT`), verified.
    package var appTransaction: JWSAppTransaction?
    /// `summary` (`RENEWAL_EXTENSION` / `SUMMARY`): a mass renewal-date extension's outcome.
    package var summary: NotificationPayload.Summary?
    /// `externalPurchaseToken` (`EXTERNAL_PURCHASE_TOKEN`).
    package var externalPurchaseToken: NotificationPayload.ExternalPurchaseToken?
    /// `CONSUMPTION_REQUEST`: why the customer asks for a refund (`data.consumptionRequestReason`).
    package var consumptionRequestReason: String?
    /// The `payload` of its `notification` entry built from what Apple signed, every member (see
    /// `SignedPayloads`), canonical JSON; `nil` for one the pipeline made itself (a refund found in
    /// the history): the entry then carries the decoded members re-encoded.
    package var whole: String?

    /// `type` as one of Apple's documented types; `nil`: one this build does not know yet (it is
    /// kept and recorded all the same, never refused).
    package var notificationType: NotificationType? { NotificationType(rawValue: type) }
    /// `subtype` likewise; `nil` also when there is none.
    package var notificationSubtype: NotificationSubtype? { subtype.flatMap(NotificationSubtype.init(rawValue:)) }

    package init(
        _ payload: NotificationPayload, transaction: JWSTransaction?, renewal: JWSRenewalInfo?, appTransaction: JWSAppTransaction? = nil
    ) {
        type = payload.notificationType
        subtype = payload.subtype
        uuid = payload.notificationUUID
        signedDate = payload.signedDate
        // An external purchase token names none: its id says (`SANDBOX…` the sandbox's), as the door checks it.
        environment = payload.data?.environment ?? payload.summary?.environment ?? payload.appData?.environment
            ?? payload.externalPurchaseToken?.environment
        bundleID = payload.data?.bundleID ?? payload.summary?.bundleID ?? payload.appData?.bundleID ?? payload.externalPurchaseToken?.bundleID
        self.transaction = transaction
        self.renewal = renewal
        self.appTransaction = appTransaction
        summary = payload.summary
        externalPurchaseToken = payload.externalPurchaseToken
        consumptionRequestReason = payload.data?.consumptionRequestReason
    }

    enum CodingKeys: String, CodingKey {
        case type, subtype, uuid
        case signedDate = "signed_date"
        case environment
        case bundleID = "bundle_id"
        case transaction, renewal
        case appTransaction = "app_transaction"
        case summary
        case externalPurchaseToken = "external_purchase_token"
        case consumptionRequestReason = "consumption_request_reason"
        case whole
    }

    /// The original transaction this notification is about, for the per-subscription record.
    package var originalTransactionID: String? {
        transaction?.originalTransactionID ?? renewal?.originalTransactionID
    }

    /// The app account token of the purchase it is about, when the transaction carries one.
    package var appAccountToken: String? { transaction?.appAccountToken }

    /// What its `notification` entry on the fulfilment stream says besides `user_id`: the type,
    /// subtype, UUID, when Apple signed it, the environment, the app, the purchase, a refund request's
    /// reason (`consumption_request_reason`), and `payload`: what
    /// Apple signed, whole (`whole`: transaction, renewal info, app transaction, summary, external
    /// purchase token, the notification itself; no signatures) as canonical JSON, which the
    /// webhook body embeds as an object.
    package var streamFields: [String: String] {
        var fields = [
            "notification_type": type, "subtype": subtype ?? "", "notification_uuid": uuid,
            "signed_date": signedDate.map(String.init) ?? "", "environment": environment ?? "",
        ]
        if let original = originalTransactionID { fields["original_transaction_id"] = original }
        if let bundleID, !bundleID.isEmpty { fields["bundle_id"] = bundleID }
        if let reason = consumptionRequestReason, !reason.isEmpty { fields["consumption_request_reason"] = reason }
        if let transaction {
            fields["transaction_id"] = transaction.transactionID
            fields["product_id"] = transaction.productID
        } else if let product = renewal?.productID ?? summary?.productID {
            fields["product_id"] = product
        }
        fields["payload"] = whole ?? String(decoding: canonicalJSON(Payload(self)), as: UTF8.self)
        return fields
    }

    /// The decoded members, as `payload` carries them.
    struct Payload: Encodable {
        var transaction: JWSTransaction?
        var renewal: JWSRenewalInfo?
        var appTransaction: JWSAppTransaction?
        var summary: NotificationPayload.Summary?
        var externalPurchaseToken: NotificationPayload.ExternalPurchaseToken?

        init(_ notification: VerifiedNotification) {
            transaction = notification.transaction
            renewal = notification.renewal
            appTransaction = notification.appTransaction
            summary = notification.summary
            externalPurchaseToken = notification.externalPurchaseToken
        }

        enum CodingKeys: String, CodingKey {
            case transaction, renewal, summary
            case appTransaction = "app_transaction"
            case externalPurchaseToken = "external_purchase_token"
        }
    }
}
