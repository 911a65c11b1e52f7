import AppleJWS
import AppleSimulator
import Foundation
import PipelineCore
import IAPStages
import PipelineTestSupport
import Testing

/// `GET /v1/users/{user_id}/entitlements` over HTTP, after purchases went through the pipeline.
@Suite(.serialized) struct EntitlementEndToEndTests {
    /// The harness's catalog as `IAP_PRODUCTS_FILE`, so the intake can name entitlements.
    static func withCatalog(_ body: (PipelineHarness) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("products-\(UUID().uuidString).json")
        try PipelineHarness.catalogJSON.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withPipeline(environment: ["IAP_PRODUCTS_FILE": file.path], body)
    }

    @Test func aUsersSubscriptionAndNonConsumableAreTheirEntitlements() async throws {
        try await Self.withCatalog { pipeline in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let subscription = JWSTransaction(
                transactionID: "7000000000000001", webOrderLineItemID: "7000000000000101", bundleID: PipelineHarness.bundleID,
                productID: "vip.monthly", purchaseDate: now - 1000, expiresDate: now + 3_600_000, type: "Auto-Renewable Subscription",
                signedDate: now)
            let jws = try pipeline.simulator.serverAPI.register(subscription)
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws)).status == .granted)
            let pack = receipt([.init(transactionID: "7100", productID: "level.pack")])
            #expect(try await pipeline.terminal(try await pipeline.submit(pack)).status == .granted)

            let reply = try await pipeline.get("/v1/users/player-1/entitlements")
            #expect(reply.status == 200)
            #expect(reply.json["user_id"] as? String == "player-1" && (reply.json["as_of"] as? String)?.hasPrefix("20") == true)
            let items = try #require(reply.json["entitlements"] as? [[String: Any]])
            #expect(items.map { $0["entitlement"] as? String } == ["level_pack", "no_ads", "premium"])
            #expect(items[0]["product_id"] as? String == "level.pack" && items[0]["expires_at"] == nil)
            #expect(items[2]["product_id"] as? String == "vip.monthly" && items[2]["status"] as? String == "active")
            #expect(items[2]["original_transaction_id"] as? String == "7000000000000001" && items[2]["expires_at"] is String)
            // The stream says it too, for a backend that only reads it.
            let events = try await pipeline.fulfilments().filter { $0["event"] == "entitlement_changed" }
            #expect(Set(events.compactMap { $0["entitlement"] }) == ["premium", "no_ads"])

            let nobody = try await pipeline.get("/v1/users/nobody/entitlements")
            #expect(nobody.status == 200 && (nobody.json["entitlements"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func anIntakeWithoutACatalogSaysSo() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let reply = try await pipeline.get("/v1/users/player-1/entitlements")
            #expect(reply.status == 503)
            #expect((reply.json["error"] as? [String: Any])?["code"] as? String == "entitlements_not_configured")
        }
    }

    static func subscribe(_ pipeline: PipelineHarness, _ id: String, user: String = "player-1", expiresIn: Int64 = 3_600_000) async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let subscription = JWSTransaction(
            transactionID: id, webOrderLineItemID: "w\(id)", bundleID: PipelineHarness.bundleID, productID: "vip.monthly",
            purchaseDate: now - 1000, expiresDate: now + expiresIn, type: "Auto-Renewable Subscription", signedDate: now - 1000,
            environment: "Sandbox")
        let jws = try pipeline.simulator.serverAPI.register(subscription)
        #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws, user: user)).status == .granted)
    }

    static func entitlements(_ pipeline: PipelineHarness) async throws -> [String] {
        let reply = try await pipeline.get("/v1/users/player-1/entitlements")
        return (reply.json["entitlements"] as? [[String: Any]] ?? []).map { "\($0["entitlement"]!) \($0["status"]!)" }
    }

    static func deliver(_ pipeline: PipelineHarness, _ signed: String) async throws -> Ticket {
        let reply = try await pipeline.notify(signed)
        #expect(reply.status == 200)
        return try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
    }

    /// A refund revokes the subscription; a DID_RENEW Apple signed before the refund but
    /// delivered after it does not bring the entitlements back.
    @Test func aLateRenewalAfterARefundStaysRevoked() async throws {
        try await Self.withCatalog { pipeline in
            try await Self.subscribe(pipeline, "7200000000000001")
            #expect(try await Self.entitlements(pipeline) == ["no_ads active", "premium active"])
            let api = pipeline.simulator.serverAPI
            let lateRenewal = try api.signedNotification(type: "DID_RENEW", transactionID: "7200000000000001")
            let refund = try api.signedNotification(type: "REFUND", transactionID: "7200000000000001")
            #expect(try await Self.deliver(pipeline, refund).result == "revoked")
            #expect(try await Self.entitlements(pipeline).isEmpty)
            let record = try await pipeline.redis.send(
                "HGETALL", pipeline.configuration.keys.subscription(originalTransactionID: "7200000000000001")).stringDictionary
            #expect(record["status"] == "revoked" && record["cause"] == "notification:REFUND")
            _ = try await pipeline.terminal(try #require(try await pipeline.notify(lateRenewal).json["ticket"] as? String))
            #expect(try await Self.entitlements(pipeline).isEmpty)
            let revoked = try await pipeline.fulfilments().filter { $0["event"] == "entitlement_changed" && $0["status"] == "revoked" }
            #expect(Set(revoked.compactMap { $0["entitlement"] }) == ["premium", "no_ads"])
        }
    }

    /// Billing trouble: a grace period keeps the entitlements (flagged), its end and then the
    /// expiry take them away, whatever the client says.
    @Test func aGracePeriodKeepsTheEntitlementsAndExpiryEndsThem() async throws {
        try await Self.withCatalog { pipeline in
            try await Self.subscribe(pipeline, "7200000000000002")
            let api = pipeline.simulator.serverAPI
            let graceEnds = Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000
            let failed = try api.signedNotification(
                type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", transactionID: "7200000000000002",
                renewal: JWSRenewalInfo(originalTransactionID: "7200000000000002", gracePeriodExpiresDate: graceEnds, environment: "Sandbox"))
            #expect(try await Self.deliver(pipeline, failed).result == "applied")
            #expect(try await Self.entitlements(pipeline) == ["no_ads grace_period", "premium grace_period"])
            #expect(try await Self.deliver(pipeline, try api.signedNotification(type: "GRACE_PERIOD_EXPIRED", transactionID: "7200000000000002")).result == "applied")
            #expect(try await Self.entitlements(pipeline).isEmpty)
            // Apple names the win-back offers the lapsed subscriber may have (StoreKit applies them unsigned).
            var lapsed = JWSRenewalInfo(originalTransactionID: "7200000000000002", autoRenewStatus: 0, environment: "Sandbox")
            lapsed.eligibleWinBackOfferIDs = ["wb-1", "wb-2"]
            lapsed.expirationIntent = 2
            #expect(try await Self.deliver(pipeline, try api.signedNotification(
                type: "EXPIRED", subtype: "BILLING_RETRY", transactionID: "7200000000000002", renewal: lapsed)).result == "applied")
            let record = try await pipeline.redis.send(
                "HGETALL", pipeline.configuration.keys.subscription(originalTransactionID: "7200000000000002")).stringDictionary
            #expect(record["status"] == "expired" && record["eligible_win_back_offer_ids"] == "wb-1,wb-2")
            // Why it expired, in one word (the notification's subtype), and the win-back offers.
            #expect(try await pipeline.fulfilments().contains {
                $0["event"] == "expired" && $0["original_transaction_id"] == "7200000000000002" && $0["expiration_reason"] == "billing_retry"
                    && $0["eligible_win_back_offer_ids"] == "wb-1,wb-2"
            })
        }
    }

    /// A monthly subscription with a 12-month commitment (API 1.21): the record keeps the period's
    /// billing plan and the commitment's fields, and the renewal info's, while it is in one; a
    /// period billed up front after it takes the commitment's fields off; a retention offer's
    /// period (`offerType` 5) goes out as such on its `renewed` event.
    @Test func aCommitmentPlanIsKeptOnTheRecordWhileTheSubscriptionIsInOne() async throws {
        try await Self.withCatalog { pipeline in
            let now = Int64(Date().timeIntervalSince1970 * 1000), month: Int64 = 2_592_000_000
            let api = pipeline.simulator.serverAPI
            func period(_ id: String, _ index: Int64, plan: String, commitment: TransactionCommitment?, offer: Int? = nil) throws -> String {
                var transaction = JWSTransaction(
                    transactionID: id, originalTransactionID: "7300000000000001", webOrderLineItemID: "w\(id)",
                    bundleID: PipelineHarness.bundleID, productID: "vip.monthly", purchaseDate: now - month + index * 1000,
                    expiresDate: now + index * month, type: "Auto-Renewable Subscription", signedDate: now - month + index * 1000,
                    environment: "Sandbox")
                transaction.billingPlanType = plan
                transaction.commitmentInfo = commitment
                transaction.offerType = offer
                return try api.register(transaction)
            }
            let key = pipeline.configuration.keys.subscription(originalTransactionID: "7300000000000001")
            func record() async throws -> [String: String] { try await pipeline.redis.send("HGETALL", key).stringDictionary }

            let first = try period("7300000000000001", 1, plan: "MONTHLY", commitment: TransactionCommitment(
                billingPeriodNumber: 1, totalBillingPeriods: 12, commitmentExpiresDate: now + 12 * month, commitmentPrice: 9990))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: first)).status == .granted)
            var fields = try await record()
            #expect(fields["billing_plan_type"] == "MONTHLY" && fields["commitment_period"] == "1" && fields["commitment_periods"] == "12")
            #expect(fields["commitment_expires_at"] == String(now + 12 * month) && fields["commitment_price"] == "9990")
            #expect(try await pipeline.fulfilments().contains {
                $0["event"] == "granted" && $0["billing_plan_type"] == "MONTHLY" && $0["commitment_period"] == "1"
            })
            // The grant record too (what the transactions export reads).
            let grant = try await pipeline.redis.send("HGETALL", pipeline.configuration.keys.grant(
                unit: "wol:w7300000000000001", originalTransactionID: "7300000000000001")).stringDictionary
            #expect(grant["billing_plan_type"] == "MONTHLY" && grant["commitment_periods"] == "12" && grant["commitment_price"] == "9990")

            // The renewal info: the commitment will not renew into another one.
            var renewal = JWSRenewalInfo(originalTransactionID: "7300000000000001", productID: "vip.monthly", environment: "Sandbox")
            renewal.renewalBillingPlanType = "MONTHLY"
            renewal.commitmentInfo = RenewalCommitment(
                autoRenewProductID: "vip.monthly", autoRenewStatus: 0, renewalBillingPlanType: "BILLED_UPFRONT",
                renewalDate: now + 12 * month, renewalPrice: 99990)
            let changed = try api.signedNotification(
                type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", transactionID: "7300000000000001", renewal: renewal)
            #expect(try await Self.deliver(pipeline, changed).result == "applied")
            fields = try await record()
            #expect(fields["renewal_billing_plan_type"] == "MONTHLY" && fields["commitment_renews"] == "0")
            #expect(fields["commitment_renewal_product_id"] == "vip.monthly" && fields["commitment_renewal_billing_plan_type"] == "BILLED_UPFRONT")
            #expect(fields["commitment_renewal_at"] == String(now + 12 * month) && fields["commitment_renewal_price"] == "99990")

            // Out of the commitment: a period billed up front, bought with a retention offer.
            let after = try period("7300000000000002", 2, plan: "BILLED_UPFRONT", commitment: nil, offer: 5)
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: after)).status == .granted)
            fields = try await record()
            #expect(fields["billing_plan_type"] == "BILLED_UPFRONT" && fields["latest_transaction_id"] == "7300000000000002")
            #expect(["commitment_period", "commitment_periods", "commitment_expires_at", "commitment_price"].allSatisfy { fields[$0] == nil })
            #expect(try await pipeline.fulfilments().contains {
                $0["event"] == "renewed" && $0["transaction_id"] == "7300000000000002" && $0["offer_type"] == "5"
            })
            renewal.renewalBillingPlanType = "BILLED_UPFRONT"
            renewal.commitmentInfo = nil
            let upfront = try api.signedNotification(
                type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", transactionID: "7300000000000002", renewal: renewal)
            #expect(try await Self.deliver(pipeline, upfront).result == "applied")
            fields = try await record()
            #expect(fields["renewal_billing_plan_type"] == "BILLED_UPFRONT")
            #expect(["commitment_renews", "commitment_renewal_product_id", "commitment_renewal_at"].allSatisfy { fields[$0] == nil })
        }
    }
}
