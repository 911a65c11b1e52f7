import AppleJWS
import Foundation
import IAPOperations
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// Every stored notification reaches the backend: one `notification` event each (its decoded
/// members, no signatures, for the purchase's owner), and for those that change what a player has
/// or may soon have, one normalised event as well.
@Suite(.serialized) struct NotificationEventTests {
    @Test func everyNotificationReachesTheWebhookAndStateChangesAreNormalised() async throws {
        try await WebhookTests.withReceiver { pipeline, receiver in
            let api = pipeline.simulator.serverAPI
            let id = "7400000000000001"
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            var period = JWSTransaction(
                transactionID: id, bundleID: PipelineHarness.bundleID, productID: "vip.monthly", purchaseDate: now,
                expiresDate: now + 30 * 86_400_000, type: "Auto-Renewable Subscription", environment: "Sandbox")
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: try api.register(period), user: "owner")).status == .granted)
            func renewal(_ change: (inout JWSRenewalInfo) -> Void = { _ in }) -> JWSRenewalInfo {
                var info = JWSRenewalInfo(originalTransactionID: id, productID: "vip.monthly", environment: "Sandbox")
                change(&info)
                return info
            }
            var signed: [(type: String, uuid: String)] = []
            func send(_ type: String, subtype: String? = nil, transaction: String? = id, renewal: JWSRenewalInfo? = nil,
                      appTransaction: JWSAppTransaction? = nil, summary: NotificationPayload.Summary? = nil,
                      externalPurchaseToken: NotificationPayload.ExternalPurchaseToken? = nil) async throws {
                let uuid = UUID().uuidString.lowercased()
                let notification = try api.signedNotification(
                    type: type, subtype: subtype, transactionID: transaction, uuid: uuid, renewal: renewal,
                    appTransaction: appTransaction, summary: summary, externalPurchaseToken: externalPurchaseToken)
                let reply = try await pipeline.notify(notification)
                #expect(reply.status == 200, "\(type): \(reply.json)")
                _ = try await pipeline.terminal(try #require(reply.json["ticket"] as? String), orHeld: true)
                signed.append((type, uuid))
            }
            try await send("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", renewal: renewal { $0.autoRenewStatus = 0 })
            try await send("DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", renewal: renewal { $0.autoRenewProductID = "vip.yearly" })
            try await send("PRICE_INCREASE", subtype: "PENDING", renewal: renewal())
            try await send("REFUND_DECLINED")
            // Apple extended the period by a week (a compensation for an outage): Apple signs the
            // transaction with its new end.
            let extended = now + 37 * 86_400_000
            period.expiresDate = extended
            _ = try api.register(period)
            try await send("RENEWAL_EXTENDED")
            try await send("RESCIND_CONSENT", transaction: nil, appTransaction: JWSAppTransaction(
                appTransactionID: "704000000000001", bundleID: PipelineHarness.bundleID, receiptType: "Sandbox", receiptCreationDate: now))
            try await send("RENEWAL_EXTENSION", subtype: "SUMMARY", transaction: nil, summary: .init(
                requestIdentifier: "r-1", environment: "Sandbox", bundleID: PipelineHarness.bundleID, productID: "vip.monthly"))
            try await send("METADATA_UPDATE")
            try await send("TEST", transaction: nil)

            // One `notification` event per notification; six normalised ones.
            let normalised = [
                "auto_renew_changed", "renewal_preference_changed", "price_increase", "refund_declined", "renewal_extended",
                "consent_rescinded",
            ]
            let deliveries = try await receiver.deliveries(until: { all in
                all.filter { $0.accepted && $0.fields["type"] == "notification" }.count == 9
                    && all.filter { $0.accepted && normalised.contains($0.fields["type"] ?? "") }.count == 6
            })
            let notifications = deliveries.filter { $0.accepted && $0.fields["type"] == "notification" }
            #expect(Set(notifications.compactMap { $0.fields["notification_uuid"] }) == Set(signed.map(\.uuid)))
            for delivery in notifications {
                let body = try #require(try JSONSerialization.jsonObject(with: Data(delivery.body)) as? [String: Any])
                let payload = try #require(body["payload"] as? [String: Any], "\(delivery.fields)")
                let type = delivery.fields["notification_type"] ?? ""
                #expect(!String(decoding: delivery.body, as: UTF8.self).contains("eyJ"), "a signature in \(type)'s event")
                switch type {
                case "RESCIND_CONSENT":
                    #expect((payload["app_transaction"] as? [String: Any])?["appTransactionId"] as? String == "704000000000001")
                    #expect(delivery.fields["user_id"] == "")
                case "RENEWAL_EXTENSION":
                    #expect((payload["summary"] as? [String: Any])?["requestIdentifier"] as? String == "r-1")
                case "TEST":
                    // Nothing signed inside: the notification's own payload alone, as Apple signed it.
                    #expect(Set(payload.keys) == ["notification"] && delivery.fields["user_id"] == "")
                    #expect((payload["notification"] as? [String: Any])?["notificationType"] as? String == "TEST")
                default:
                    #expect((payload["transaction"] as? [String: Any])?["transactionId"] as? String == id, "\(type)")
                    #expect(delivery.fields["user_id"] == "owner" && delivery.fields["original_transaction_id"] == id, "\(type)")
                    #expect(delivery.fields["environment"] == "Sandbox" && delivery.fields["signed_date"]?.isEmpty == false)
                }
            }
            func event(_ name: String) throws -> [String: String] {
                try #require(deliveries.first { $0.accepted && $0.fields["type"] == name }?.fields, "no \(name)")
            }
            #expect(try event("auto_renew_changed")["auto_renew"] == "off")
            #expect(try event("auto_renew_changed")["user_id"] == "owner")
            #expect(try event("renewal_preference_changed")["change"] == "downgrade")
            #expect(try event("renewal_preference_changed")["renewal_product_id"] == "vip.yearly")
            #expect(try event("price_increase")["status"] == "pending")
            #expect(try event("refund_declined")["transaction_id"] == id)
            #expect(try event("renewal_extended")["expires_at"] == String(extended))
            #expect(try event("consent_rescinded")["app_transaction_id"] == "704000000000001")
            // The extension moved the subscription's end at once; the auto-renew flag is off.
            let record = try await pipeline.redis.send("HGETALL", pipeline.configuration.keys.subscription(originalTransactionID: id)).stringDictionary
            #expect(record["expires_at"] == String(extended) && record["status"] == "active" && record["auto_renew"] == "0")
            // The owner's timeline shows them.
            let timeline = try await pipeline.store.userReport(user: "owner", catalog: PipelineHarness.catalog).timeline
            #expect(timeline.filter { $0["event"] == "notification" }.count == 6)
            #expect(Set(timeline.compactMap { $0["event"] }).isSuperset(of: Set(normalised).subtracting(["consent_rescinded"])))
            // A notification delivered again is seen before: no second event.
            let again = try api.signedNotification(type: "REFUND_DECLINED", transactionID: id, uuid: signed[3].uuid)
            #expect(try await pipeline.notify(again).json["status"] as? String == "seen_before")
            #expect(try await pipeline.fulfilments(notifications: true).filter { $0["notification_uuid"] == signed[3].uuid }.count == 2)

            // The rest of Apple's 23 types, those that move grants last: each one event as well.
            for type in [
                "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED", "ONE_TIME_CHARGE", "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "EXPIRED",
                "CONSUMPTION_REQUEST", "MIGRATION", "PRICE_CHANGE", "REFUND", "REVOKE", "REFUND_REVERSED",
            ] {
                try await send(type)
            }
            // An external purchase token names no environment: its id says (`SANDBOX…`, else production).
            try await send("EXTERNAL_PURCHASE_TOKEN", subtype: "UNREPORTED", transaction: nil, externalPurchaseToken: .init(
                externalPurchaseID: "SANDBOX_e-1", tokenCreationDate: now, bundleID: PipelineHarness.bundleID))
            try await send("EXTERNAL_PURCHASE_TOKEN", subtype: "UNREPORTED", transaction: nil, externalPurchaseToken: .init(
                externalPurchaseID: "e-2", tokenCreationDate: now, bundleID: PipelineHarness.bundleID))
            #expect(Set(signed.map(\.type)).count == 23)
            let every = try await receiver.deliveries(until: { all in
                Set(all.filter { $0.accepted && $0.fields["type"] == "notification" }.compactMap { $0.fields["notification_uuid"] }).count == 24
            })
            let types = Set(every.filter { $0.fields["type"] == "notification" }.compactMap { $0.fields["notification_type"] })
            #expect(types == Set(signed.map(\.type)))
            // Every type's event carries its environment (docs/webhooks.md), and so does its ticket.
            var environments: [String: String] = [:]
            for delivery in every where delivery.accepted && delivery.fields["type"] == "notification" {
                let type = delivery.fields["notification_type"] ?? ""
                #expect(delivery.fields["environment"]?.isEmpty == false, "\(type) has no environment")
                if let uuid = delivery.fields["notification_uuid"] { environments[uuid] = delivery.fields["environment"] }
            }
            let tokens = signed.suffix(2).map(\.uuid)
            #expect(tokens.map { environments[$0] } == ["Sandbox", "Production"])
            for (uuid, environment) in zip(tokens, ["Sandbox", "Production"]) {
                let ticket = try #require(try await pipeline.store.notificationTicket(uuid: uuid))
                #expect(try await pipeline.readTicket(ticket)?.environment == environment)
            }
        }
    }
}
