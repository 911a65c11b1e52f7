/// Apple's App Store Server Notifications V2 types (`notificationType`), every one Apple documents.
/// A payload keeps the type as Apple wrote it (`NotificationPayload.notificationType`): a type
/// Apple adds later is still admitted, kept and recorded, and reads here as `nil` until it is
/// listed. Whoever acts on a type switches over this enum, so that a new case is a compile error
/// in every place that must decide what it means.
public enum NotificationType: String, Sendable, CaseIterable {
    case consumptionRequest = "CONSUMPTION_REQUEST"
    case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
    case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
    case didFailToRenew = "DID_FAIL_TO_RENEW"
    case didRenew = "DID_RENEW"
    case expired = "EXPIRED"
    case externalPurchaseToken = "EXTERNAL_PURCHASE_TOKEN"
    case gracePeriodExpired = "GRACE_PERIOD_EXPIRED"
    case metadataUpdate = "METADATA_UPDATE"
    case migration = "MIGRATION"
    case offerRedeemed = "OFFER_REDEEMED"
    case oneTimeCharge = "ONE_TIME_CHARGE"
    case priceChange = "PRICE_CHANGE"
    case priceIncrease = "PRICE_INCREASE"
    case refund = "REFUND"
    case refundDeclined = "REFUND_DECLINED"
    case refundReversed = "REFUND_REVERSED"
    case renewalExtended = "RENEWAL_EXTENDED"
    case renewalExtension = "RENEWAL_EXTENSION"
    case rescindConsent = "RESCIND_CONSENT"
    case revoke = "REVOKE"
    case subscribed = "SUBSCRIBED"
    case test = "TEST"
}

/// Apple's notification subtypes (`subtype`): what further describes some types' events. As with
/// the type, the payload keeps Apple's text; one not listed here reads as `nil`.
public enum NotificationSubtype: String, Sendable, CaseIterable {
    case accepted = "ACCEPTED"
    case activeTokenReminder = "ACTIVE_TOKEN_REMINDER"
    case autoRenewDisabled = "AUTO_RENEW_DISABLED"
    case autoRenewEnabled = "AUTO_RENEW_ENABLED"
    case billingRecovery = "BILLING_RECOVERY"
    case billingRetry = "BILLING_RETRY"
    case created = "CREATED"
    case downgrade = "DOWNGRADE"
    case failure = "FAILURE"
    case gracePeriod = "GRACE_PERIOD"
    case initialBuy = "INITIAL_BUY"
    case pending = "PENDING"
    case priceIncrease = "PRICE_INCREASE"
    case productNotForSale = "PRODUCT_NOT_FOR_SALE"
    case resubscribe = "RESUBSCRIBE"
    case summary = "SUMMARY"
    case unreported = "UNREPORTED"
    case upgrade = "UPGRADE"
    case voluntary = "VOLUNTARY"
}
