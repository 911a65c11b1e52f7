import AppleJWS
import AppleReceipt
import Foundation
import PipelineCore
import IAPStages
import RedisClient
import TestSupport
import PipelineTestSupport
import Testing

/// The notification transitions on their own, against a real Redis: accept_notification,
/// revoke_grant, reinstate_grant, record_notification, and what grant_purchases does with a
/// refund marker, owners, app account tokens and unclaimed purchases.
@Suite struct NotificationScriptTests {
    static let keys = RedisKeys(prefix: "{t}iap")
    static let member = "notify:w1"

    static func notificationJob(_ ticket: String, type: String = "REFUND", uuid: String = "U-1") -> Job {
        let transaction = JWSTransaction(transactionID: "7", bundleID: "b", productID: "gold", revocationReason: 1)
        let notification = VerifiedNotification(
            NotificationPayload(notificationType: type, notificationUUID: uuid, signedDate: 5, data: nil),
            transaction: transaction, renewal: nil)
        return Job(ticket: ticket, stage: .notify, userID: "", work: .notification(notification), enqueuedAt: 1000)
    }

    /// Accepts a notification and moves its job into the notifier's in-flight list.
    static func held(_ store: PipelineStore, _ job: Job) async throws -> String {
        #expect(try await store.acceptNotification(job, uuid: job.notification!.uuid, ttl: .seconds(3600)).created)
        let payload = try #require(try await store.redis.send("RPOP", keys.queue(.notify)).string)
        try await store.redis.send("LPUSH", keys.inflight(member: member), payload)
        return payload
    }

    static func grant(_ redis: RedisClient, unit: String, ticket: String = "G1", user: String = "owner") async throws {
        try await redis.send("HSET", keys.grant(unit: unit), "ticket", ticket, "user_id", user, "product_id", "gold", "quantity", "1",
                             "transaction_id", unit, "original_transaction_id", unit, "environment", "Production", "unit", unit,
                             "granted_at", "1")
    }

    @Test func acceptNotificationStoresOncePerUUID() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            let first = try await store.acceptNotification(Self.notificationJob("N1"), uuid: "U-1", ttl: .seconds(3600))
            let again = try await store.acceptNotification(Self.notificationJob("N2"), uuid: "U-1", ttl: .seconds(3600))
            #expect(first.created && first.ticket == "N1" && !again.created && again.ticket == "N1")
            #expect(try await redis.send("LLEN", Self.keys.queue(.notify)).int == 1)
            let ticket = try await redis.send("HGETALL", Self.keys.ticket("N1")).stringDictionary
            #expect(ticket["status"] == "queued" && ticket["kind"] == "notification" && ticket["notification_type"] == "REFUND")
            // The UUID outlives the ticket: at least 30 days.
            #expect((try await redis.send("TTL", Self.keys.notification(uuid: "U-1")).int ?? 0) >= 30 * 86400)
        }
    }

    /// A stored notification is one `notification` entry for its purchase's owner, written in the
    /// step that stores it (never again for its UUID); `record_notification` adds the normalised
    /// event it is given for the owner too.
    @Test func aStoredNotificationIsOneStreamEntryAndItsNormalisedEventTheOwners() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            try await redis.send("SET", Self.keys.owner(originalTransactionID: "7"), "owner")
            let job = Self.notificationJob("N1", type: "DID_CHANGE_RENEWAL_STATUS", uuid: "U-9")
            let payload = try await Self.held(store, job)
            #expect(try await store.acceptNotification(Self.notificationJob("N2", uuid: "U-9"), uuid: "U-9", ttl: .seconds(60)).created == false)
            let entries = try await fulfilmentEvents(redis, Self.keys, notifications: true)
            #expect(entries.count == 1)
            let entry = try #require(entries.first)
            #expect(entry["event"] == "notification" && entry["user_id"] == "owner" && entry["ticket"] == "N1")
            #expect(entry["notification_type"] == "DID_CHANGE_RENEWAL_STATUS" && entry["notification_uuid"] == "U-9")
            #expect(entry["original_transaction_id"] == "7" && entry["transaction_id"] == "7" && entry["signed_date"] == "5")
            let decoded = try JSONSerialization.jsonObject(with: Data((entry["payload"] ?? "").utf8)) as? [String: Any]
            #expect((decoded?["transaction"] as? [String: Any])?["transactionId"] as? String == "7")
            let notification = try #require(job.notification)
            let event = try #require(NotificationEvent.fields(of: notification, now: 9))
            #expect(try await store.recordNotification(
                payload, member: Self.member, job: job, result: "recorded", entry: "{}", in: .history(originalTransactionID: "7"),
                event: event) == .moved)
            let after = try await fulfilmentEvents(redis, Self.keys, notifications: true)
            #expect(after.map { $0["event"] } == ["notification", "auto_renew_changed"])
            #expect(after.last?["user_id"] == "owner" && after.last?["auto_renew"] == "off" && after.last?["changed_at"] == "9")
        }
    }

    @Test func revokeGrantRevokesOnceOrRemembersTheRefund() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            try await Self.grant(redis, unit: "7")
            let job = Self.notificationJob("N1")
            let payload = try await Self.held(store, job)
            let (moved, result) = try await store.revoke(payload, member: Self.member, job: job, unit: "7", originalTransactionID: "7", revocation: .init(reason: "1", type: "REFUND_FULL"), now: 42)
            #expect(moved == .moved && result == "revoked")
            let record = try await redis.send("HGETALL", Self.keys.grant(unit: "7")).stringDictionary
            #expect(record["revoked_at"] == "42" && record["revocation_reason"] == "1" && record["revocation_type"] == "REFUND_FULL")
            let events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.count == 1 && events[0]["event"] == "revoked" && events[0]["user_id"] == "owner" && events[0]["ticket"] == "G1")
            let applied = try await store.ticket("N1")
            #expect(applied?.status == .applied && applied?.result == "revoked")
            // Not held any more: nothing moves.
            #expect(try await store.revoke(payload, member: Self.member, job: job, unit: "7", originalTransactionID: "7", revocation: .init(reason: "1", type: "x")).0 == .leaseLost)
            // Another REFUND of the same unit: already revoked, no second event.
            let second = Self.notificationJob("N2", uuid: "U-2")
            let (_, secondResult) = try await store.revoke(
                try await Self.held(store, second), member: Self.member, job: second, unit: "7", originalTransactionID: "7", revocation: .init(reason: "1", type: "x"))
            #expect(secondResult == "already_revoked")
            #expect(try await fulfilmentEvents(redis, Self.keys).count == 1)
            // The owner's refunds were counted once (IAP_MAX_REFUNDS_PER_USER reads it).
            #expect(try await redis.send("GET", Self.keys.refunds(user: "owner")).string == "1")
            // A unit not granted yet: the refund is remembered.
            let early = Self.notificationJob("N3", uuid: "U-3")
            let (_, earlyResult) = try await store.revoke(
                try await Self.held(store, early), member: Self.member, job: early, unit: "8", originalTransactionID: "8", revocation: .init(reason: "1", type: "x"), now: 43)
            #expect(earlyResult == "refund_remembered")
            #expect(try await redis.send("GET", Self.keys.refunded(unit: "8")).string == "43")
            // A consumable's refund in part before the grant remembers its share; never over one in whole.
            for (index, (unit, percentage, expected)) in [("9", 33333, "44:33333"), ("9", 66667, "45:66667"), ("8", 50000, "43")].enumerated() {
                let job = Self.notificationJob("P\(index)", uuid: "UP-\(index)")
                let revocation = Revocation(reason: "0", type: "REFUND_PRORATED", percentage: percentage, prorate: true)
                #expect(try await store.revoke(
                    try await Self.held(store, job), member: Self.member, job: job, unit: unit, originalTransactionID: unit,
                    revocation: revocation, now: Int64(44 + index)).1 == "refund_remembered")
                #expect(try await redis.send("GET", Self.keys.refunded(unit: unit)).string == expected)
            }
        }
    }

    /// A consumable's `REFUND_PRORATED` takes back round(quantity x percentage / 100000) units in
    /// all, each refund only what the ones before did not, and counts its share of a refund; the
    /// last units taken back make it a refund in whole, counted once; a reversal gives back what
    /// was taken and uncounts it.
    @Test func aProratedRefundTakesBackItsShareOfTheUnitsOnce() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            try await Self.grant(redis, unit: "7")
            try await redis.send("HSET", Self.keys.grant(unit: "7"), "quantity", "3")
            var index = 0
            func refund(_ percentage: Int?, type: String = "REFUND_PRORATED", prorate: Bool = true) async throws -> String? {
                index += 1
                let job = Self.notificationJob("P\(index)", uuid: "UP-\(index)")
                let revocation = Revocation(reason: "0", type: type, percentage: percentage, prorate: prorate)
                return try await store.revoke(
                    try await Self.held(store, job), member: Self.member, job: job, unit: "7", originalTransactionID: "7",
                    revocation: revocation, now: Int64(100 + index)).1
            }
            // One of three refunded: one unit back, a third of a refund counted.
            #expect(try await refund(33333) == "partially_revoked")
            var record = try await redis.send("HGETALL", Self.keys.grant(unit: "7")).stringDictionary
            #expect(record["revoked_at"] == nil && record["revoked_quantity"] == "1" && record["revocation_percentage"] == "33333")
            #expect(try await redis.send("GET", Self.keys.refundsProrated(user: "owner")).string == "33333")
            #expect(try await store.refundCount(of: "owner") == 0.33333)
            // The same share again (Apple's retry, or the refund history): nothing more.
            #expect(try await refund(33333) == "already_revoked")
            // Two of three: one more unit, one more third.
            #expect(try await refund(66667) == "partially_revoked")
            var events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.map { $0["revoked_quantity"] } == ["1", "1"])
            #expect(events.map { $0["revocation_percentage"] } == ["33333", "66667"])
            #expect(events.allSatisfy { $0["event"] == "revoked" && $0["revocation_type"] == "REFUND_PRORATED" && $0["quantity"] == "3" })
            #expect(try await redis.send("GET", Self.keys.refundsProrated(user: "owner")).string == "66667")
            // A reversal gives back both units and the two thirds.
            let reversal = Self.notificationJob("R1", type: "REFUND_REVERSED", uuid: "UR-1")
            #expect(try await store.reinstate(
                try await Self.held(store, reversal), member: Self.member, job: reversal, unit: "7", originalTransactionID: "7",
                now: 200).1 == "reinstated")
            events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.last?["event"] == "reinstated" && events.last?["reinstated_quantity"] == "2")
            #expect(try await redis.send("GET", Self.keys.refundsProrated(user: "owner")).string == "0")
            record = try await redis.send("HGETALL", Self.keys.grant(unit: "7")).stringDictionary
            #expect(record["revoked_quantity"] == nil && record["revocation_percentage"] == nil)
            // A third again, then the rest in whole: the last two units, one whole refund, the third uncounted.
            #expect(try await refund(33333) == "partially_revoked")
            #expect(try await refund(nil, type: "REFUND_FULL", prorate: false) == "revoked")
            record = try await redis.send("HGETALL", Self.keys.grant(unit: "7")).stringDictionary
            #expect(record["revoked_at"] == "105" && record["revoked_quantity"] == "3" && record["revocation_type"] == "REFUND_FULL")
            #expect(try await fulfilmentEvents(redis, Self.keys).last?["revoked_quantity"] == "2")
            #expect(try await store.refundCount(of: "owner") == 1)
            #expect(try await refund(100_000) == "already_revoked")
        }
    }

    /// What is not a consumable cannot be owned in part: a prorated refund of it takes it all back.
    @Test func aProratedRefundOfWhatIsNotAConsumableIsARefundInWhole() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            try await Self.grant(redis, unit: "7")
            let job = Self.notificationJob("N1")
            var transaction = JWSTransaction(transactionID: "7", bundleID: "b", productID: "gold", revocationReason: 0)
            transaction.revocationType = "REFUND_PRORATED"
            transaction.revocationPercentage = 50_000
            let revocation = Revocation(transaction, notificationType: "REFUND", consumable: false)
            #expect(!revocation.prorate && revocation.percentage == 50_000)
            #expect(Revocation(transaction, notificationType: "REFUND", consumable: true).prorate)
            #expect(try await store.revoke(
                try await Self.held(store, job), member: Self.member, job: job, unit: "7", originalTransactionID: "7",
                revocation: revocation, now: 9).1 == "revoked")
            let events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.last?["revoked_quantity"] == "1" && events.last?["revocation_percentage"] == "50000")
            #expect(try await store.refundCount(of: "owner") == 1)
        }
    }

    @Test func reinstateGrantUndoesARevocationOnceOrForgetsTheRefund() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            try await Self.grant(redis, unit: "7")
            try await redis.send("HSET", Self.keys.grant(unit: "7"), "revoked_at", "5", "revocation_reason", "1", "revocation_type", "R")
            try await redis.send("SET", Self.keys.refunded(unit: "8"), "5")
            try await redis.send("SET", Self.keys.refunds(user: "owner"), "1")
            var results: [String?] = []
            for (index, unit) in ["7", "7", "8", "9"].enumerated() {
                let job = Self.notificationJob("N\(index)", type: "REFUND_REVERSED", uuid: "U-\(index)")
                results.append(try await store.reinstate(try await Self.held(store, job), member: Self.member, job: job, unit: unit, originalTransactionID: unit, now: 50).1)
            }
            #expect(results == ["reinstated", "not_revoked", "refund_forgotten", "not_revoked"])
            let record = try await redis.send("HGETALL", Self.keys.grant(unit: "7")).stringDictionary
            #expect(record["revoked_at"] == nil && record["reinstated_at"] == "50")
            #expect(try await fulfilmentEvents(redis, Self.keys).map { $0["event"] } == ["reinstated"])
            #expect(try await redis.send("EXISTS", Self.keys.refunded(unit: "8")).int == 0)
            // The reversal took the refund off the owner's count.
            #expect(try await redis.send("GET", Self.keys.refunds(user: "owner")).string == "0")
        }
    }

    @Test func recordNotificationKeepsTheNewestHundredOrParksUnclaimed() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            for index in 0..<102 {
                let job = Self.notificationJob("N\(index)", type: "DID_CHANGE_RENEWAL_STATUS", uuid: "U-\(index)")
                #expect(try await store.recordNotification(
                    try await Self.held(store, job), member: Self.member, job: job, result: "recorded", entry: "e\(index)",
                    in: .history(originalTransactionID: "7")) == .moved)
            }
            let kept = try await redis.send("LRANGE", Self.keys.notifications(originalTransactionID: "7"), "0", "-1").array ?? []
            #expect(kept.count == 100 && kept.first?.string == "e101")
            let job = Self.notificationJob("P1", type: "ONE_TIME_CHARGE", uuid: "U-P")
            #expect(try await store.recordNotification(
                try await Self.held(store, job), member: Self.member, job: job, result: "unclaimed", entry: "{}",
                in: .unclaimed(transactionID: "7", originalTransactionID: "7")) == .moved)
            #expect(try await redis.send("HGET", Self.keys.unclaimed, "7").string == "{}")
            #expect(try await store.ticket("P1")?.result == "unclaimed")
        }
    }

    @Test func grantPurchasesHonoursARefundMarkerAndBindsOwnerAndToken() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            try await redis.send("SET", Self.keys.refunded(unit: "2"), "1")
            try await redis.send("HSET", Self.keys.unclaimed, "1", "{}")
            var job = Job(ticket: "T1", userID: "u1", receiptData: "eA==", productID: nil, transactionID: nil, enqueuedAt: 1)
            var first = InAppTransaction(transactionID: "1", productID: "gold")
            first.appAccountToken = "AAAAAAAA-1111-2222-3333-444444444444"
            let receipt = VerifiedReceipt(
                environment: "Sandbox", bundleID: "b", transactions: [first, InAppTransaction(transactionID: "2", productID: "gold")])
            job = job.movedToGrant(["1", "2"].map {
                Purchase(transactionID: $0, originalTransactionID: $0, productID: "gold", quantity: 1, unit: $0, outcome: .pending)
            }, in: receipt)
            job.source = "notification"
            _ = try await store.submit(job, receiptDigest: "d", ttl: .seconds(3600))
            _ = try await redis.send("RPOP", Self.keys.queue(.verify))
            try await redis.send("LPUSH", Self.keys.inflight(member: "grant:w1"), job.encoded())
            for unit in ["1", "2"] { try await redis.send("SET", Self.keys.claim(unit: unit), "T1") }
            let (moved, status) = try await store.grant(job.encoded(), member: "grant:w1", job: job)
            #expect(moved == .moved && status == .granted)
            let ticket = try #require(try await store.ticket("T1"))
            #expect(ticket.transactions.map(\.outcome) == [.granted, .rejected] && ticket.transactions[1].reason == "refunded")
            // The refunded unit's claim is released (a reversal may let it through later); nothing else.
            #expect(try await redis.send("EXISTS", Self.keys.claim(unit: "2")).int == 0)
            #expect(try await redis.send("EXISTS", Self.keys.grant(unit: "2")).int == 0)
            let events = try await fulfilmentEvents(redis, Self.keys)
            #expect(events.count == 1 && events[0]["event"] == "granted" && events[0]["source"] == "notification")
            #expect(try await redis.send("GET", Self.keys.owner(originalTransactionID: "1")).string == "u1")
            #expect(try await redis.send("GET", Self.keys.accountToken("aaaaaaaa-1111-2222-3333-444444444444")).string == "u1")
            #expect(try await redis.send("HEXISTS", Self.keys.unclaimed, "1").int == 0)
        }
    }
}
