import Crypto
import Foundation
import RedisClient
import TestSupport
import Testing

@testable import PipelineCore
@testable import IAPStages
@testable import IAPOperations

/// Every script declares every key it touches. The script suites run on a one-node Redis Cluster
/// with every key the pipeline names under the hash tag `{t}`: a `#!lua` script that touches a key
/// it built itself (in another slot) is refused there, so each branch those suites take proves
/// its keys declared. This suite shows the node refuses, runs the housekeeping scripts there, and
/// checks that no script is left out.
@Suite struct DeclaredKeysTests {
    static let keys = RedisKeys(prefix: "{t}iap")

    /// Where each script runs on a cluster node with tagged keys.
    static let enforcedBy: [String: String] = [
        "submit_receipt": "TransitionScriptTests", "take_jobs": "TransitionScriptTests", "mark_verifying": "TransitionScriptTests",
        "forward_job": "TransitionScriptTests", "claim_purchases": "TransitionScriptTests", "schedule_retry": "TransitionScriptTests",
        "promote_due_retries": "TransitionScriptTests", "dead_letter_job": "TransitionScriptTests", "finish_ticket": "TransitionScriptTests",
        "replay_dead_letter": "TransitionScriptTests", "requeue_inflight": "TransitionScriptTests",
        "reap_expired_workers": "TransitionScriptTests", "record_heartbeat": "TransitionScriptTests",
        "record_apple_failure": "AppleBreakerTests", "record_apple_answers": "AppleBreakerTests", "take_apple_probe": "AppleBreakerTests",
        "trim_fulfilment_stream": "RetentionTests", "trim_dead_letters": "RetentionTests",
        "record_consumption": "RetentionTests", "grant_purchases": "TransitionScriptTests",
        "accept_notification": "NotificationScriptTests", "revoke_grant": "NotificationScriptTests",
        "reinstate_grant": "NotificationScriptTests", "record_notification": "NotificationScriptTests",
        "apply_subscription_notification": "EntitlementTests", "release_held_purchase": "PurchasePolicyTests",
        "reject_held_purchase": "PurchasePolicyTests", "grant_by_operator": "OperatorScriptTests",
        "revoke_by_operator": "OperatorScriptTests", "route_fulfilment_events": "DeclaredKeysTests",
        "finish_webhook_event": "DeclaredKeysTests", "promote_due_rechecks": "DeclaredKeysTests",
        "force_recheck": "DeclaredKeysTests", "take_api_permit": "DeclaredKeysTests", "hold_api_endpoint": "DeclaredKeysTests",
        "claim_part": "PartScriptTests", "split_job": "PartScriptTests", "finish_part": "PartScriptTests",
        "acknowledge_job": "PartScriptTests", "reserve_daily_grant": "PurchasePolicyTests", "seat_apple_account": "PurchasePolicyTests",
        "release_daily_grant": "PurchasePolicyTests", "take_submission_permit": "TransitionScriptTests",
        "settle_held_ticket": "PurchasePolicyTests", "claim_notification_sweep": "NotificationHistoryTests",
        "finish_notification_sweep": "NotificationHistoryTests",
        "erase_user_in_bucket": "ErasureTests", "pseudonymise_tickets": "ErasureTests",
        "keep_history_revision": "DeclaredKeysTests", "index_user_events": "UserEventsTests",
        "import_purchase": "AdoptionImportTests", "count_subscription": "DeclaredKeysTests",
        "record_queue_sample": "DeclaredKeysTests", "record_retention_answer": "RetentionAnswerTests",
        "grant_for_a_time": "TimedGrantTests", "end_timed_grant": "TimedGrantTests",
    ]

    @Test func everyScriptRunsOnAClusterNodeSomewhere() {
        #expect(Set(Self.enforcedBy.keys) == Set(PipelineScripts.all.map { $0.name }))
    }

    /// What the suites rely on: a key outside the declared keys' slot is refused, not run.
    @Test func aClusterNodeRefusesAKeyAScriptDidNotDeclare() async throws {
        try await withClusterNode { redis, _ in
            let script = "#!lua\nredis.call('SET', KEYS[1], 1)\nreturn redis.call('SET', 'iap:built-in-lua', 1)"
            let reply = try await redis.execute(RedisCommand("EVAL", script, "1", Self.keys.claim(unit: "u1")))
            guard case .error(let message) = reply else {
                Issue.record("the node ran a script that touched an undeclared key: \(reply)")
                return
            }
            #expect(message.contains("do not hash to the same slot"))
            // Nothing outside the tag was written.
            #expect(try await redis.send("EXISTS", Self.keys.claim(unit: "u1")).int == 1)
        }
    }

    static func loaded(_ redis: RedisClient, _ scripts: [any PipelineScript.Type]) async throws -> [String: Bool] {
        let shas = scripts.map { script in
            Insecure.SHA1.hash(data: Array(script.script.source.utf8)).map { String(format: "%02x", $0) }.joined()
        }
        let reply = try await redis.send(RedisCommand(["SCRIPT", "EXISTS"] + shas))
        return Dictionary(uniqueKeysWithValues: zip(scripts.map { $0.name }, (reply.array ?? []).map { $0.int == 1 }))
    }

    /// The housekeeping scripts, whose keys come from what they read (users of stream entries,
    /// due subscriptions), on the cluster node: routing, a delivery's end, re-check promotion,
    /// a forced re-check, the Server API's budget and hold.
    @Test func theHousekeepingScriptsTouchOnlyTheKeysTheyDeclare() async throws {
        try await withClusterNode { redis, _ in
            let store = PipelineStore(redis: redis, keys: Self.keys)
            for user in ["alice", "bob", ""] {
                try await redis.send("XADD", Self.keys.fulfilment, "*", "event", "granted", "user_id", user, "unit", "u-\(user)")
            }
            #expect(try await store.routeFulfilmentEvents(consumer: "webhook:w1", count: 10, now: 1000) == 3)
            #expect(try await store.routeFulfilmentEvents(consumer: "webhook:w1", count: 10, now: 1000) == 0)
            #expect(try await redis.send("LLEN", Self.keys.queue(.webhook)).int == 3)
            #expect(try await redis.send("SMEMBERS", Self.keys.webhookBusy).array?.count == 3)

            // Alice's delivery ends: her only event leaves her list, her job and ticket end.
            let payload = try #require(try await redis.send("RPOPLPUSH", Self.keys.queue(.webhook), Self.keys.inflight(member: "webhook:w1")).string)
            let job = try Job.decode(payload)
            let head = try #require(try await store.nextWebhookEvent(user: job.userID))
            let id = try #require((try JSONSerialization.jsonObject(with: Data(head.utf8)) as? [String: Any])?["id"] as? String)
            #expect(try await store.finishWebhookEvent(payload, member: "webhook:w1", job: job, eventID: id, now: 2000) == .moved)
            #expect(try await redis.send("EXISTS", Self.keys.webhookEvents(user: job.userID)).int == 0)

            // A due re-check: its record, then its ticket, declared as the script names them.
            let now: Int64 = 1_800_000_000_000
            try await redis.send(
                "HSET", Self.keys.subscription(originalTransactionID: "s1"), "user_id", "alice", "status", "active",
                "expires_at", String(now + 1000), "environment", "Sandbox", "history_revision", "hr:7")
            try await redis.send("ZADD", Self.keys.rechecks, String(now - 1), "s1")
            let schedule = RecheckSchedule(before: .seconds(60), after: .seconds(30), maxTries: 2)
            #expect(try await store.promoteDueRechecks(schedule: schedule, ticketTTL: .seconds(60), now: now) == 1)
            let ticket = PromoteDueRechecks.ticket(original: "s1", now: now, try: 1)
            #expect(try await store.ticket(ticket)?.status == .queued)
            // The job carries where the last re-check read Apple's history to.
            let queued = try #require(try await redis.send("LINDEX", Self.keys.queue(.verify), "0").string)
            guard case .recheck(let request)? = try Job.decode(queued).toVerify?.evidence else {
                Issue.record("not a re-check: \(queued)")
                return
            }
            #expect(request.historyRevision == "hr:7")
            #expect(try await store.forceRecheck(originalTransactionID: "s1", now: now))
            #expect(try await store.forceRecheck(originalTransactionID: "nobody", now: now) == false)
            // A record from before the live count of subscribers: counted once.
            let record = Self.keys.subscription(originalTransactionID: "s1")
            #expect(try await store.run(CountSubscription(record: record, in: Self.keys)))
            #expect(try await store.run(CountSubscription(record: record, in: Self.keys)) == false)
            #expect(try await redis.send("HGET", Self.keys.subscribers, "active|Sandbox|||").int == 1)
            #expect(try await store.run(CountSubscription(record: Self.keys.subscription(originalTransactionID: "s2"), in: Self.keys)) == false)
            // The queues' minute for the console, kept once.
            let look = try await store.queueSample(now: now)
            #expect(try await store.recordQueueSample(look, now: now))
            #expect(try await store.recordQueueSample(look, now: now + 1000) == false)

            // The Server API's fleet budget and Apple's Retry-After.
            #expect(try await store.takeAPIPermit(environment: "sandbox", endpoint: "lookup", limit: 1, window: .seconds(3600)) == 0)
            #expect(try await store.takeAPIPermit(environment: "sandbox", endpoint: "lookup", limit: 1, window: .seconds(3600)) > 0)
            let until = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
            #expect(try await store.holdAPIEndpoint(environment: "sandbox", endpoint: "history", untilMs: until) == until)

            // Where a sync read an Apple Account's history to, per environment.
            try await store.keepHistoryRevision("hr:20", ofAppleAccount: "705000000000001", environment: "Sandbox")
            #expect(try await store.historyRevision(ofAppleAccount: "705000000000001", environment: "Sandbox") == "hr:20")
            #expect(try await store.historyRevision(ofAppleAccount: "705000000000001", environment: "Production") == nil)

            let ran = try await Self.loaded(redis, [
                RouteFulfilmentEvents.self, FinishWebhookEvent.self, PromoteDueRechecks.self, ForceRecheck.self,
                TakeAPIPermit.self, HoldAPIEndpoint.self, KeepHistoryRevision.self, CountSubscription.self, RecordQueueSample.self,
            ])
            #expect(ran.values.allSatisfy { $0 }, "\(ran)")
        }
    }
}
