import AppleJWS
import Testing

@testable import IAPStages
@testable import PipelineCore

/// Apple's vocabulary, typed: every documented notification type has one route in the notifier,
/// and a type Apple adds before this build knows it is recorded, never refused or dropped.
@Suite struct NotificationTypeTests {
    /// The notifier's table, as the notifier's documentation states it (a new type changes this
    /// table on purpose, never by accident).
    static let routes: [NotificationType: NotifyHandler.Route] = [
        .refund: .revokeOrReinstate, .revoke: .revokeOrReinstate, .refundReversed: .revokeOrReinstate,
        .oneTimeCharge: .grant, .subscribed: .grant, .didRenew: .grant, .offerRedeemed: .grant,
        .expired: .subscriptionChange, .didFailToRenew: .subscriptionChange, .gracePeriodExpired: .subscriptionChange,
        .didChangeRenewalStatus: .subscriptionChange, .renewalExtended: .subscriptionChange,
        .consumptionRequest: .consumptionRequest,
        .didChangeRenewalPref: .record, .externalPurchaseToken: .record, .metadataUpdate: .record, .migration: .record,
        .priceChange: .record, .priceIncrease: .record, .refundDeclined: .record, .renewalExtension: .record,
        .rescindConsent: .record, .test: .record,
    ]

    @Test func everyTypeAppleDocumentsHasItsRoute() {
        #expect(NotificationType.allCases.count == 23)
        #expect(Set(Self.routes.keys) == Set(NotificationType.allCases))
        for type in NotificationType.allCases {
            #expect(NotifyHandler.route(type) == Self.routes[type], "\(type.rawValue)")
        }
    }

    @Test func aTypeOrSubtypeThisBuildDoesNotKnowReadsAsNilAndIsRecorded() throws {
        let payload = NotificationPayload(
            notificationType: "SOMETHING_NEW", subtype: "ALSO_NEW", notificationUUID: "u-1", signedDate: 1, data: nil)
        let notification = VerifiedNotification(payload, transaction: nil, renewal: nil)
        #expect(notification.type == "SOMETHING_NEW")
        #expect(notification.notificationType == nil)
        #expect(notification.notificationSubtype == nil)
        #expect(NotifyHandler.route(notification.notificationType) == .record)
        #expect(NotificationEvent.fields(of: notification, now: 1) == nil)
    }

    @Test func theWireTextIsApples() throws {
        let payload = NotificationPayload(
            notificationType: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", notificationUUID: "u-2", signedDate: 1, data: nil)
        let notification = VerifiedNotification(payload, transaction: nil, renewal: nil)
        #expect(notification.notificationType == .didFailToRenew)
        #expect(notification.notificationSubtype == .gracePeriod)
        #expect(NotifyHandler.status(after: notification) == "grace_period")
    }
}

/// Why a subscription expired: the `EXPIRED` subtype first, else the renewal info's
/// `expirationIntent`; nothing when Apple said neither.
@Suite struct ExpirationReasonTests {
    @Test func theSubtypeWinsThenTheIntent() {
        #expect(ExpirationReason.of(subtype: .voluntary, intent: 2) == "voluntary")
        #expect(ExpirationReason.of(subtype: .productNotForSale, intent: nil) == "product_not_for_sale")
        #expect(ExpirationReason.of(subtype: nil, intent: 3) == "price_increase")
        #expect(ExpirationReason.of(subtype: .gracePeriod, intent: 5) == "other")
        #expect(ExpirationReason.of(subtype: nil, intent: nil) == nil)
        #expect(ExpirationReason.of(intent: 9) == nil)
    }
}
