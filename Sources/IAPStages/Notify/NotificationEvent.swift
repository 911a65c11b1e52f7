import AppStoreServerAPI
import AppleJWS
import PipelineCore

/// The normalised event a notification means for the backend, beside its own `notification`
/// entry, when it changes what a player has or may soon have: written on the fulfilment stream
/// in the notify stage's step that applies the notification (`record_notification`,
/// `apply_subscription_notification`), for the purchase's owner.
package enum NotificationEvent {
    /// The stream entry's fields (`user_id` is the script's to add), or `nil` for a notification
    /// that means no such event.
    package static func fields(of notification: VerifiedNotification, now: Int64) -> [String: String]? {
        let transaction = notification.transaction
        let renewal = notification.renewal
        var fields: [String: String]
        switch notification.notificationType {
        case .didChangeRenewalStatus:
            let on = notification.subtype.map { NotificationSubtype(rawValue: $0) == .autoRenewEnabled } ?? (renewal?.autoRenewStatus == 1)
            fields = ["event": "auto_renew_changed", "auto_renew": on ? "on" : "off"]
        case .didChangeRenewalPref:
            // No subtype: the customer went back to their current product (a pending change undone).
            let change = switch notification.notificationSubtype {
            case .upgrade: "upgrade"
            case .downgrade: "downgrade"
            default: "cancelled"
            }
            fields = ["event": "renewal_preference_changed", "change": change, "renewal_product_id": renewal?.autoRenewProductID ?? ""]
        case .priceIncrease:
            fields = ["event": "price_increase", "status": notification.notificationSubtype == .accepted ? "accepted" : "pending"]
        case .refundDeclined:
            fields = ["event": "refund_declined"]
        case .renewalExtended:
            fields = ["event": "renewal_extended", "expires_at": transaction?.expiresDate.map(String.init) ?? ""]
        case .rescindConsent:
            fields = ["event": "consent_rescinded", "app_transaction_id": notification.appTransaction?.appTransactionID ?? ""]
        // Their events are the grant's, the revocation's or the subscription's own; or none.
        case .consumptionRequest, .didFailToRenew, .didRenew, .expired, .externalPurchaseToken, .gracePeriodExpired,
             .metadataUpdate, .migration, .offerRedeemed, .oneTimeCharge, .priceChange, .refund, .refundReversed,
             .renewalExtension, .revoke, .subscribed, .test, nil:
            return nil
        }
        return withCommonFields(fields, of: notification, now: now)
    }

    /// `refund_answered`: the answer to a `CONSUMPTION_REQUEST` that Apple took: the rule that
    /// chose the refund preference (what the day's figures count it by, `answered_by_rule:<rule>`),
    /// the preference (`NONE`: the facts alone) and delivery status sent, the request's reason,
    /// and the purchase's storefront and currency (its cell in the figures).
    package static func refundAnswered(
        _ notification: VerifiedNotification, information: ConsumptionInformation, rule: String, now: Int64
    ) -> [String: String] {
        var fields = [
            "event": "refund_answered", "refund_rule": rule, "refund_preference": information.refundPreference?.rawValue ?? "NONE",
            "delivery_status": information.deliveryStatus.rawValue,
            "consumption_request_reason": notification.consumptionRequestReason ?? "",
        ]
        fields["storefront"] = notification.transaction?.storefront
        fields["currency"] = notification.transaction?.currency
        return withCommonFields(fields, of: notification, now: now)
    }

    /// What every normalised event says of its notification and purchase.
    private static func withCommonFields(_ fields: [String: String], of notification: VerifiedNotification, now: Int64) -> [String: String] {
        let transaction = notification.transaction
        var fields = fields
        fields["source"] = "notification"
        fields["notification_uuid"] = notification.uuid
        fields["changed_at"] = String(now)
        if let environment = notification.environment { fields["environment"] = environment }
        if let bundleID = notification.bundleID, !bundleID.isEmpty { fields["bundle_id"] = bundleID }
        if let original = notification.originalTransactionID { fields["original_transaction_id"] = original }
        if let transaction {
            fields["transaction_id"] = transaction.transactionID
            fields["product_id"] = transaction.productID
        } else if let product = notification.renewal?.productID {
            fields["product_id"] = product
        }
        return fields
    }
}
