import AppleJWS
import AppleSimulator
import Foundation
import PipelineCore
import IAPStages
import PipelineTestSupport
import Testing

/// App Store Server Notifications V2: verified at the door, applied once per UUID, refunds take a
/// grant back exactly once whenever they come, and purchases Apple reports reach their account.
@Suite(.serialized) struct NotificationTests {
    /// Delivers a notification and waits until it is applied; returns its ticket.
    func deliver(_ pipeline: PipelineHarness, _ signed: String, times: Int = 1) async throws -> Ticket {
        var ticket: String?
        for delivery in 0..<times {
            let reply = try await pipeline.notify(signed)
            #expect(reply.status == 200, "delivery \(delivery): \(reply.json)")
            #expect(reply.json["status"] as? String == (delivery == 0 ? "accepted" : "seen_before"))
            if let ticket { #expect(reply.json["ticket"] as? String == ticket) }
            ticket = reply.json["ticket"] as? String
        }
        return try await pipeline.terminal(try #require(ticket))
    }

    func events(_ pipeline: PipelineHarness) async throws -> [String] {
        try await pipeline.fulfilments().map { $0["event"] ?? "?" }
    }

    @Test func aRefundRevokesExactlyOneGrantHoweverOftenAppleDeliversIt() async throws {
        try await withPipeline { pipeline in
            let api = pipeline.simulator.serverAPI
            let jws = try api.register(SignedFixture.consumable("4000000000000001"))
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws)).status == .granted)
            let refund = try api.signedNotification(type: "REFUND", transactionID: "4000000000000001")
            let applied = try await deliver(pipeline, refund, times: 3)
            #expect(applied.status == .applied && applied.result == "revoked")
            // Another REFUND notification (a new UUID) about the same purchase changes nothing.
            let again = try await deliver(pipeline, try api.signedNotification(type: "REFUND", transactionID: "4000000000000001"))
            #expect(again.result == "already_revoked")
            #expect(try await events(pipeline) == ["granted", "revoked"])
            let revoked = try await pipeline.fulfilments()[1]
            #expect(revoked["user_id"] == "player-1" && revoked["transaction_id"] == "4000000000000001")
            #expect(revoked["source"] == "notification" && revoked["revocation_type"] == "REFUND_FULL")
            let record = try await pipeline.redis.send("HGETALL", pipeline.configuration.keys.grant(unit: "4000000000000001")).stringDictionary
            #expect(record["revoked_at"] != nil && record["revocation_reason"] == "1" && record["revocation_type"] == "REFUND_FULL")
            // The purchase is never granted again, whoever sends it.
            let resent = try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "player-2"))
            #expect(resent.status == .duplicate)
            // A reversal gives it back, once.
            let reversal = try await deliver(pipeline, try api.signedNotification(type: "REFUND_REVERSED", transactionID: "4000000000000001"))
            #expect(reversal.result == "reinstated")
            #expect(try await events(pipeline) == ["granted", "revoked", "reinstated"])
        }
    }

    /// A third of three items refunded (Apple's `REFUND_PRORATED`, 33333 milliunits) takes back one
    /// item, not three; the rest of the refund later takes back the other two, once.
    @Test func aOneThirdRefundOfThreeItemsTakesBackOne() async throws {
        try await withPipeline { pipeline in
            let api = pipeline.simulator.serverAPI
            var transaction = SignedFixture.consumable("4000000000000031")
            transaction.quantity = 3
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: try api.register(transaction))).status == .granted)
            let third = try await deliver(
                pipeline, try api.signedNotification(type: "REFUND", transactionID: "4000000000000031", revocationPercentage: 33333))
            #expect(third.status == .applied && third.result == "partially_revoked")
            let revoked = try #require(try await pipeline.fulfilments().last)
            #expect(revoked["event"] == "revoked" && revoked["revoked_quantity"] == "1" && revoked["quantity"] == "3")
            #expect(revoked["revocation_type"] == "REFUND_PRORATED" && revoked["revocation_percentage"] == "33333")
            #expect(try await pipeline.store.refundCount(of: "player-1") == 0.33333)
            let rest = try await deliver(pipeline, try api.signedNotification(type: "REFUND", transactionID: "4000000000000031"))
            #expect(rest.result == "revoked")
            #expect(try await pipeline.fulfilments().last?["revoked_quantity"] == "2")
            #expect(try await events(pipeline) == ["granted", "revoked", "revoked"])
            #expect(try await pipeline.store.refundCount(of: "player-1") == 1)
        }
    }

    /// A signed transaction with a member this build does not decode (Apple adds fields) and the
    /// notification's own members reach the `notification` event's payload as Apple signed them.
    @Test func whatAppleSignsReachesTheEventWholeUnknownFieldsToo() async throws {
        struct Newer: Encodable {
            var transaction: JWSTransaction
            enum Extra: String, CodingKey { case billingPlanType, advancedCommerceInfo }
            func encode(to encoder: any Encoder) throws {
                try transaction.encode(to: encoder)
                var extra = encoder.container(keyedBy: Extra.self)
                try extra.encode("MONTHLY_INSTALLMENTS", forKey: .billingPlanType)
                try extra.encode(["requestReferenceId": "r-1"], forKey: .advancedCommerceInfo)
            }
        }
        try await withPipeline { pipeline in
            var transaction = SignedFixture.consumable("4000000000000041")
            transaction.revocationType = "REFUND_PRORATED"
            transaction.revocationPercentage = 50_000
            let signed = try pipeline.authority.signer.sign(payload: Newer(transaction: transaction))
            var data = NotificationPayload.NotificationData(
                bundleID: PipelineHarness.bundleID, environment: "Sandbox", signedTransactionInfo: signed)
            data.status = 1
            let notification = try pipeline.authority.signer.sign(payload: NotificationPayload(
                notificationType: "REFUND", notificationUUID: UUID().uuidString.lowercased(),
                signedDate: Int64(Date().timeIntervalSince1970 * 1000), data: data))
            _ = try await deliver(pipeline, notification)
            let entry = try #require(try await pipeline.fulfilments(notifications: true).first { $0["event"] == "notification" })
            let payload = try #require(
                try JSONSerialization.jsonObject(with: Data((entry["payload"] ?? "").utf8)) as? [String: Any])
            let signedTransaction = try #require(payload["transaction"] as? [String: Any])
            #expect(signedTransaction["billingPlanType"] as? String == "MONTHLY_INSTALLMENTS")
            #expect((signedTransaction["advancedCommerceInfo"] as? [String: Any])?["requestReferenceId"] as? String == "r-1")
            #expect(signedTransaction["revocationPercentage"] as? Int == 50_000)
            let outer = try #require(payload["notification"] as? [String: Any])
            let outerData = try #require(outer["data"] as? [String: Any])
            #expect(outer["notificationType"] as? String == "REFUND" && outerData["status"] as? Int == 1)
            // The signed member is there decoded, not twice: no JWS in the payload.
            #expect(outerData["signedTransactionInfo"] == nil)
        }
    }

    /// A third of three items refunded before anyone submitted them: the purchase, submitted
    /// later, grants the two the refund left (granted 3, then revoked 1, in one step), counted
    /// as a third of a refund. A later refund in whole before a grant is never overridden by a share.
    @Test func aRefundInPartBeforeTheGrantLeavesTheRestGranted() async throws {
        try await withPipeline { pipeline in
            let api = pipeline.simulator.serverAPI
            var transaction = SignedFixture.consumable("4000000000000051")
            transaction.quantity = 3
            let jws = try api.register(transaction)
            let refund = try await deliver(
                pipeline, try api.signedNotification(type: "REFUND", transactionID: "4000000000000051", revocationPercentage: 33333))
            #expect(refund.result == "refund_remembered")
            let ticket = try await pipeline.terminal(try await pipeline.submit(signed: jws))
            #expect(ticket.status == .granted)
            let entries = try await pipeline.fulfilments()
            #expect(entries.map { $0["event"] } == ["granted", "revoked"])
            #expect(entries.last?["revoked_quantity"] == "1" && entries.last?["quantity"] == "3" && entries.last?["revocation_percentage"] == "33333")
            #expect(try await pipeline.store.refundCount(of: "player-1") == 0.33333)
            let keys = pipeline.configuration.keys
            #expect(try await pipeline.redis.send("EXISTS", keys.refunded(unit: "4000000000000051", originalTransactionID: "4000000000000051")).int == 0)
            // The rest refunded later: the other two, once, and one refund in all.
            #expect(try await deliver(pipeline, try api.signedNotification(type: "REFUND", transactionID: "4000000000000051")).result == "revoked")
            #expect(try await pipeline.fulfilments().last?["revoked_quantity"] == "2")
            #expect(try await pipeline.store.refundCount(of: "player-1") == 1)
        }
    }

    @Test func aRefundThatComesBeforeTheGrantMeansNothingIsGranted() async throws {
        try await withPipeline { pipeline in
            let api = pipeline.simulator.serverAPI
            let jws = try api.register(SignedFixture.consumable("4000000000000002"))
            let refund = try await deliver(pipeline, try api.signedNotification(type: "REFUND", transactionID: "4000000000000002"), times: 2)
            #expect(refund.result == "refund_remembered")
            // The client's copy of the transaction (signed before the refund) arrives afterwards.
            let ticket = try await pipeline.terminal(try await pipeline.submit(signed: jws))
            #expect(ticket.status == .rejected && ticket.transactions.first?.reason == "refunded")
            #expect(try await pipeline.fulfilments().isEmpty)
            // Reversed before any grant: the refund is forgotten and the purchase can be granted.
            let reversal = try await deliver(pipeline, try api.signedNotification(type: "REFUND_REVERSED", transactionID: "4000000000000002"))
            #expect(reversal.result == "refund_forgotten")
            let granted = try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "player-1b"))
            #expect(granted.status == .granted)
            #expect(try await events(pipeline) == ["granted"])
        }
    }

    @Test func aOneTimeChargeNoClientReportedIsGrantedToItsAccount() async throws {
        try await withPipeline { pipeline in
            let token = "5A4D1C3E-7B2F-4E8A-9C61-0D2B3A4F5E6D"
            let bound = try await pipeline.bind(token: token, to: "player-7")
            #expect(bound.status == 200 && bound.json["app_account_token"] as? String == token.lowercased())
            let api = pipeline.simulator.serverAPI
            let jws = try api.register(SignedFixture.consumable("4000000000000003", token: token.lowercased()))
            let charge = try await deliver(pipeline, try api.signedNotification(type: "ONE_TIME_CHARGE", transactionID: "4000000000000003"), times: 2)
            #expect(charge.status == .granted && charge.transactions.map(\.transactionID) == ["4000000000000003"])
            let fulfilments = try await pipeline.fulfilments()
            #expect(fulfilments.count == 1 && fulfilments[0]["user_id"] == "player-7" && fulfilments[0]["source"] == "notification")
            // The client reports it later: nothing more is granted.
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "player-7")).status == .duplicate)
            // Another user cannot take the token.
            let taken = try await pipeline.bind(token: token, to: "player-8")
            #expect(taken.status == 409 && (taken.json["error"] as? [String: Any])?["code"] as? String == "app_account_token_taken")
            // A user id with a space travels percent-encoded in the path and is bound as itself.
            let spaced = try await pipeline.bind(token: "0F4D1C3E-7B2F-4E8A-9C61-0D2B3A4F5E6D", to: "player%20nine")
            #expect(spaced.status == 200 && spaced.json["user_id"] as? String == "player nine")
            let invalid = try await pipeline.bind(token: "not-a-uuid", to: "player-8")
            #expect(invalid.status == 400 && (invalid.json["error"] as? [String: Any])?["code"] as? String == "invalid_app_account_token")
        }
    }

    /// Every grant naming an Apple Account seats its user on it, with no cap configured; a
    /// purchase Apple reports without an app account token then goes to the one user seated on
    /// its Apple Account, and waits unclaimed once two are (issue 41, item 2).
    @Test func aPurchaseWithoutATokenGoesToTheOneUserOfItsAppleAccount() async throws {
        try await withPipeline { pipeline in
            let api = pipeline.simulator.serverAPI
            func onAccount(_ id: String) throws -> String {
                var transaction = SignedFixture.consumable(id)
                transaction.appTransactionID = "704000000000061"
                return try api.register(transaction)
            }
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: try onAccount("4000000000000061"), user: "solo")).status == .granted)
            #expect(try await pipeline.store.isSeated("solo", onAppleAccount: "704000000000061"))
            _ = try onAccount("4000000000000062")
            let charge = try await deliver(pipeline, try api.signedNotification(type: "ONE_TIME_CHARGE", transactionID: "4000000000000062"))
            #expect(charge.status == .granted && charge.transactions.map(\.transactionID) == ["4000000000000062"])
            let granted = try #require(try await pipeline.fulfilments().last)
            #expect(granted["user_id"] == "solo" && granted["source"] == "notification" && granted["transaction_id"] == "4000000000000062")
            // A second user on the account: whose the next one is cannot be known; it waits.
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: try onAccount("4000000000000063"), user: "sibling")).status == .granted)
            _ = try onAccount("4000000000000064")
            let waiting = try await deliver(pipeline, try api.signedNotification(type: "ONE_TIME_CHARGE", transactionID: "4000000000000064"))
            #expect(waiting.status == .applied && waiting.result == "unclaimed")
        }
    }

    @Test func aPurchaseWithNoKnownAccountWaitsUntilAUserSubmitsIt() async throws {
        try await withPipeline { pipeline in
            let api = pipeline.simulator.serverAPI
            let jws = try api.register(SignedFixture.consumable("4000000000000004"))
            let parked = try await deliver(pipeline, try api.signedNotification(type: "ONE_TIME_CHARGE", transactionID: "4000000000000004"))
            #expect(parked.status == .applied && parked.result == "unclaimed")
            let unclaimed = pipeline.configuration.keys.unclaimed
            #expect(try await pipeline.redis.send("HEXISTS", unclaimed, "4000000000000004").int == 1)
            #expect(try await pipeline.fulfilments().isEmpty)
            let ticket = try await pipeline.terminal(try await pipeline.submit(signed: jws, user: "player-9"))
            #expect(ticket.status == .granted)
            #expect(try await pipeline.redis.send("HEXISTS", unclaimed, "4000000000000004").int == 0)
            // A renewal of the same purchase now reaches its owner (bound at the grant).
            let owner = try await pipeline.redis.send("GET", pipeline.configuration.keys.owner(originalTransactionID: "4000000000000004")).string
            #expect(owner == "player-9")
        }
    }

    @Test func otherTypesAreKeptPerOriginalTransactionAndUnknownTypesNeverFail() async throws {
        try await withPipeline { pipeline in
            let api = pipeline.simulator.serverAPI
            try api.register(SignedFixture.consumable("4000000000000005"))
            for type in ["DID_CHANGE_RENEWAL_STATUS", "SOMETHING_APPLE_ADDS_NEXT_YEAR"] {
                let applied = try await deliver(pipeline, try api.signedNotification(type: type, transactionID: "4000000000000005"))
                #expect(applied.status == .applied && applied.result == "recorded")
            }
            let kept = try await pipeline.redis.send("LRANGE", pipeline.configuration.keys.notifications(originalTransactionID: "4000000000000005"), "0", "-1")
            #expect(kept.array?.count == 2)
            let test = try await deliver(pipeline, try api.signedNotification(type: "TEST", transactionID: nil))
            #expect(test.status == .applied && test.result == "ignored")
            #expect(try await pipeline.length(pipeline.configuration.keys.dead) == 0)
        }
    }

    @Test func forgedOrForeignNotificationsAreRefusedAtTheDoorAndQueueNothing() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let api = pipeline.simulator.serverAPI
            try api.register(SignedFixture.consumable("4000000000000006"))
            let genuine = try api.signedNotification(type: "REFUND", transactionID: "4000000000000006")
            let attacker = try SigningAuthority()
            let payload = NotificationPayload(
                notificationType: "ONE_TIME_CHARGE", notificationUUID: UUID().uuidString, signedDate: nil,
                data: .init(bundleID: PipelineHarness.bundleID, environment: "Sandbox",
                            signedTransactionInfo: try attacker.signer.sign(payload: SignedFixture.consumable("4000000000000007"))))
            let forgedInside = try pipeline.authority.signer.sign(payload: payload)
            let forgedOutside = try attacker.signer.sign(payload: payload)
            let parts = genuine.split(separator: ".")
            let tampered = [parts[0], Substring(Base64URL.encode(Array(#"{"notificationType":"REFUND","notificationUUID":"x"}"#.utf8))), parts[2]]
                .joined(separator: ".")
            let foreignApp = try pipeline.authority.signer.sign(payload: NotificationPayload(
                notificationType: "TEST", notificationUUID: UUID().uuidString, signedDate: nil,
                data: .init(bundleID: "com.other.app", environment: "Sandbox", signedTransactionInfo: nil)))
            let cases: [(String, Data, Int, String)] = [
                ("outer signature by another root", try Self.body(forgedOutside), 401, "invalid_signature"),
                ("nested transaction by another root", try Self.body(forgedInside), 401, "invalid_signature"),
                ("payload changed after signing", try Self.body(tampered), 401, "invalid_signature"),
                ("another app's notification", try Self.body(foreignApp), 400, "bundle_mismatch"),
                ("not JSON", Data("{".utf8), 400, "malformed_json"),
                ("no signedPayload", Data(#"{"payload": "x"}"#.utf8), 400, "missing_field"),
                ("numeric signedPayload", Data(#"{"signedPayload": 5}"#.utf8), 400, "wrong_type"),
                ("not a JWS", Data(#"{"signedPayload": "abc"}"#.utf8), 400, "invalid_jws"),
            ]
            for (what, body, status, code) in cases {
                let reply = try await pipeline.post(raw: body, path: "/v1/notifications/apple")
                #expect(reply.status == status, "\(what)")
                #expect((reply.json["error"] as? [String: Any])?["code"] as? String == code, "\(what)")
            }
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.notify)) == 0)
            #expect(try await pipeline.storedKeys() == [])
            // The genuine one is taken (and would be applied by a notifier).
            #expect(try await pipeline.notify(genuine).status == 200)
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.notify)) == 1)
        }
    }

    /// Whichever member a notification carries (`data`, `summary`, `appData`,
    /// `externalPurchaseToken`), its app is checked at the door, and a signed app transaction
    /// inside it is verified like any signed data: a foreign or unsigned one stores nothing.
    @Test func everyPayloadMemberIsCheckedAtTheDoor() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let signer = pipeline.authority.signer
            let attacker = try SigningAuthority()
            let ours = PipelineHarness.bundleID
            func notification(_ type: String, summary: NotificationPayload.Summary? = nil, appData: NotificationPayload.AppData? = nil,
                              token: NotificationPayload.ExternalPurchaseToken? = nil, data: NotificationPayload.NotificationData? = nil
            ) throws -> Data {
                try Self.body(try signer.sign(payload: NotificationPayload(
                    notificationType: type, notificationUUID: UUID().uuidString, signedDate: nil, data: data, summary: summary,
                    appData: appData, externalPurchaseToken: token)))
            }
            func appTransaction(_ bundle: String, _ environment: String, by authority: SigningAuthority? = nil) throws -> String {
                try (authority?.signer ?? signer).sign(payload: JWSAppTransaction(
                    appTransactionID: "704289572311", bundleID: bundle, receiptType: environment,
                    receiptCreationDate: Int64(Date().timeIntervalSince1970 * 1000)))
            }
            func summary(_ bundle: String?) -> NotificationPayload.Summary {
                .init(requestIdentifier: UUID().uuidString, environment: "Sandbox", bundleID: bundle, productID: "vip.monthly")
            }
            func token(_ bundle: String?) -> NotificationPayload.ExternalPurchaseToken {
                .init(externalPurchaseID: "SANDBOX_b2e6", tokenCreationDate: 1_764_000_000_000, bundleID: bundle)
            }
            let refused: [(String, Data, Int, String)] = [
                ("another app's summary", try notification("RENEWAL_EXTENSION", summary: summary("com.other.app")), 400, "bundle_mismatch"),
                ("a summary naming no app", try notification("RENEWAL_EXTENSION", summary: summary(nil)), 400, "bundle_mismatch"),
                ("another app's appData", try notification("RESCIND_CONSENT", appData: .init(
                    bundleID: "com.other.app", environment: "Sandbox", signedAppTransactionInfo: nil)), 400, "bundle_mismatch"),
                ("our appData carrying another app's app transaction", try notification("RESCIND_CONSENT", appData: .init(
                    bundleID: ours, environment: "Sandbox", signedAppTransactionInfo: try appTransaction("com.other.app", "Sandbox"))),
                 400, "bundle_mismatch"),
                ("an app transaction signed by another root", try notification("RESCIND_CONSENT", appData: .init(
                    bundleID: ours, environment: "Sandbox", signedAppTransactionInfo: try appTransaction(ours, "Sandbox", by: attacker))),
                 401, "invalid_signature"),
                ("an app transaction of another environment", try notification("RESCIND_CONSENT", appData: .init(
                    bundleID: ours, environment: "Production", signedAppTransactionInfo: try appTransaction(ours, "Sandbox"))),
                 400, "environment_mismatch"),
                ("another app's external purchase token", try notification("EXTERNAL_PURCHASE_TOKEN", token: token("com.other.app")),
                 400, "bundle_mismatch"),
                ("a transaction of another environment", try notification("ONE_TIME_CHARGE", data: .init(
                    bundleID: ours, environment: "Production", signedTransactionInfo: try signer.sign(payload: SignedFixture.consumable("4000000000000031")))),
                 400, "environment_mismatch"),
            ]
            for (what, body, status, code) in refused {
                let reply = try await pipeline.post(raw: body, path: "/v1/notifications/apple")
                #expect(reply.status == status, "\(what)")
                #expect((reply.json["error"] as? [String: Any])?["code"] as? String == code, "\(what)")
            }
            #expect(try await pipeline.storedKeys() == [])
            // Ours, of each member, are taken.
            let accepted = [
                try notification("RENEWAL_EXTENSION", summary: summary(ours)),
                try notification("RESCIND_CONSENT", appData: .init(
                    bundleID: ours, environment: "Sandbox", signedAppTransactionInfo: try appTransaction(ours, "Sandbox"))),
                try notification("EXTERNAL_PURCHASE_TOKEN", token: token(ours)),
            ]
            var tickets: [String] = []
            for body in accepted {
                let reply = try await pipeline.post(raw: body, path: "/v1/notifications/apple")
                #expect(reply.status == 200)
                tickets.append(try #require(reply.json["ticket"] as? String))
            }
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.notify)) == 3)
            // The notifier takes each (none of them is about a purchase) without a dead letter.
            pipeline.start(.notify)
            for ticket in tickets { #expect(try await pipeline.terminal(ticket).status == .applied) }
            #expect(try await pipeline.length(pipeline.configuration.keys.dead) == 0)
        }
    }

    /// As Apple's `SignedDataVerifier`: a notification about no app is refused, and with
    /// `IAP_APPLE_APP_ID` every production member names it: an external purchase token (production
    /// unless its id starts `SANDBOX`) and the app transaction an `appData` carries included.
    @Test func aNotificationAboutNoAppOrAnotherAppAppleIDIsRefused() async throws {
        try await withPipeline(startWorkers: false, environment: ["IAP_APPLE_APP_ID": "1234567890"]) { pipeline in
            let signer = pipeline.authority.signer
            let ours = PipelineHarness.bundleID
            func body(_ type: String, appData: NotificationPayload.AppData? = nil, token: NotificationPayload.ExternalPurchaseToken? = nil)
                throws -> Data
            {
                try Self.body(try signer.sign(payload: NotificationPayload(
                    notificationType: type, notificationUUID: UUID().uuidString, signedDate: nil, data: nil, summary: nil,
                    appData: appData, externalPurchaseToken: token)))
            }
            func token(_ id: String, appAppleID: Int64?) -> NotificationPayload.ExternalPurchaseToken {
                .init(externalPurchaseID: id, tokenCreationDate: 1_764_000_000_000, appAppleID: appAppleID, bundleID: ours)
            }
            func appTransaction(appAppleID: Int64?) throws -> String {
                try signer.sign(payload: JWSAppTransaction(
                    appTransactionID: "704289572399", bundleID: ours, appAppleID: appAppleID, receiptType: "Production",
                    receiptCreationDate: Int64(Date().timeIntervalSince1970 * 1000)))
            }
            let refused: [(String, Data, String)] = [
                ("a notification about no app", try body("TEST"), "no_app_member"),
                ("a production token of another app id", try body("EXTERNAL_PURCHASE_TOKEN", token: token("b2e6-1", appAppleID: 999)),
                 "app_apple_id_mismatch"),
                ("a production token of no app id", try body("EXTERNAL_PURCHASE_TOKEN", token: token("b2e6-2", appAppleID: nil)),
                 "app_apple_id_mismatch"),
                ("our appData carrying an app transaction of another app id", try body("RESCIND_CONSENT", appData: .init(
                    appAppleID: 1_234_567_890, bundleID: ours, environment: "Production",
                    signedAppTransactionInfo: try appTransaction(appAppleID: 999))), "app_apple_id_mismatch"),
            ]
            for (what, body, code) in refused {
                let reply = try await pipeline.post(raw: body, path: "/v1/notifications/apple")
                #expect(reply.status == 400 && (reply.json["error"] as? [String: Any])?["code"] as? String == code, "\(what): \(reply.json)")
            }
            #expect(try await pipeline.storedKeys() == [])
            let accepted = [
                try body("EXTERNAL_PURCHASE_TOKEN", token: token("b2e6-3", appAppleID: 1_234_567_890)),
                try body("EXTERNAL_PURCHASE_TOKEN", token: token("SANDBOX_b2e6-4", appAppleID: nil)),
                try body("RESCIND_CONSENT", appData: .init(
                    appAppleID: 1_234_567_890, bundleID: ours, environment: "Production",
                    signedAppTransactionInfo: try appTransaction(appAppleID: 1_234_567_890))),
            ]
            for body in accepted {
                let reply = try await pipeline.post(raw: body, path: "/v1/notifications/apple")
                #expect(reply.status == 200, "\(reply.json)")
            }
        }
    }

    @Test func aNotificationRedisCannotTakeIsRefusedWith503AndTakenOnceLater() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let api = pipeline.simulator.serverAPI
            try api.register(SignedFixture.consumable("4000000000000008"))
            let refund = try api.signedNotification(type: "REFUND", transactionID: "4000000000000008")
            pipeline.redisServer.kill()
            let refused = try await pipeline.notify(refund)
            #expect(refused.status == 503 && (refused.json["error"] as? [String: Any])?["code"] as? String == "redis_unavailable")
            try await pipeline.redisServer.restart()
            // Apple delivers it again later: stored once.
            var accepted = try await pipeline.notify(refund)
            for _ in 0..<50 where accepted.status == 503 {
                try await Task.sleep(for: .milliseconds(100))  // Apple's own retry pause, shortened
                accepted = try await pipeline.notify(refund)
            }
            #expect(accepted.status == 200 && accepted.json["status"] as? String == "accepted")
            #expect(try await pipeline.notify(refund).json["status"] as? String == "seen_before")
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.notify)) == 1)
        }
    }

    static func body(_ signed: String) throws -> Data {
        try JSONSerialization.data(withJSONObject: ["signedPayload": signed])
    }
}
