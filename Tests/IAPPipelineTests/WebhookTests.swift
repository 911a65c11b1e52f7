import AppleSimulator
import Foundation
import HTTPTypes
import IAPClient
import Hummingbird
import PipelineCore
import IAPStages
import NIOConcurrencyHelpers
import RedisClient
import TestSupport
import PipelineTestSupport
import Testing

/// A game backend's webhook over real HTTP: records every delivery attempt, answers 500 to the
/// users it is told to fail, 204 to the rest.
final class WebhookReceiver: Sendable {
    struct Delivery: Sendable {
        var eventID: String
        var signature: String
        var body: [UInt8]
        var fields: [String: String]
        var accepted: Bool
    }

    private struct State {
        var deliveries: [Delivery] = []
        var failing: Set<String> = []
        /// While holding, a request waits (unanswered) until `release()`.
        var holding = false
        var held: [CheckedContinuation<Void, Never>] = []
        /// Requests waiting unanswered now.
        var waiting = 0
    }

    private let state = NIOLockedValueBox(State())
    private let (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))

    var deliveries: [Delivery] { state.withLockedValue { $0.deliveries } }
    func fail(_ users: Set<String>) { state.withLockedValue { $0.failing = users } }
    /// Requests from now on wait unanswered, as a receiver that hangs.
    func hold() { state.withLockedValue { $0.holding = true } }
    /// Answers every waiting request, and the next at once.
    func release() {
        let held = state.withLockedValue { state in
            state.holding = false
            state.waiting = 0
            defer { state.held = [] }
            return state.held
        }
        for request in held { request.resume() }
    }
    /// How many requests wait unanswered now.
    var waiting: Int { state.withLockedValue { $0.waiting } }

    private func waitWhileHolding() async {
        await withCheckedContinuation { (request: CheckedContinuation<Void, Never>) in
            let held = state.withLockedValue { state in
                guard state.holding else { return false }
                state.held.append(request)
                state.waiting += 1
                return true
            }
            if held { signal.yield() } else { request.resume() }
        }
    }

    func application(onServerRunning: @escaping @Sendable (Int) async -> Void) -> some ApplicationProtocol {
        let router = Router()
        router.post("/hook") { request, _ in
            let body = Array(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            await self.waitWhileHolding()
            let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
            let fields = object.compactMapValues { $0 as? String }
            let accepted = self.state.withLockedValue { state in
                let accepted = !state.failing.contains(fields["user_id"] ?? "_")
                state.deliveries.append(Delivery(
                    eventID: request.headers[HTTPField.Name("X-IAP-Event-Id")!] ?? "",
                    signature: request.headers[HTTPField.Name("X-IAP-Signature")!] ?? "", body: body, fields: fields,
                    accepted: accepted))
                return accepted
            }
            self.signal.yield()
            return Response(status: accepted ? .noContent : .internalServerError)
        }
        return Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { await onServerRunning($0.localAddress?.port ?? 0) })
    }

    /// Waits, woken by each delivery, until the deliveries so far satisfy `done`.
    func deliveries(until done: @escaping @Sendable ([Delivery]) -> Bool, within: Duration = .seconds(20)) async throws -> [Delivery] {
        let deadline = ContinuousClock.now + within
        while true {
            let current = deliveries
            if done(current) { return current }
            guard ContinuousClock.now < deadline else {
                throw TestSupportError("deliveries never matched: \(current.map { "\($0.fields["user_id"] ?? "?") \($0.eventID) \($0.accepted)" })")
            }
            let signals = self.signals
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for await _ in signals { return } }
                group.addTask { try await Task.sleep(until: deadline) }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}

@Suite(.serialized) struct WebhookTests {
    static let secret = "whsec-0123456789abcdef"

    static func withReceiver(
        maxAgeSeconds: Int = 259_200, _ body: (PipelineHarness, WebhookReceiver) async throws -> Void
    ) async throws {
        let receiver = WebhookReceiver()
        let server = try await RunningServer.start { receiver.application(onServerRunning: $0) }
        do {
            try await withPipeline(environment: [
                "IAP_WEBHOOK_URL": server.baseURL + "/hook", "IAP_WEBHOOK_SECRET": secret,
                "IAP_WEBHOOK_MAX_AGE_S": String(maxAgeSeconds),
            ]) { pipeline in try await body(pipeline, receiver) }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test func routingMovesEachEntryToItsUsersListOnceWithOneJobPerUser() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let store = pipeline.store
            let keys = store.keys
            for (user, product) in [("ann", "a1"), ("bob", "b1"), ("ann", "a2")] {
                _ = try await store.redis.send("XADD", keys.fulfilment, "*", "event", "granted", "user_id", user, "product_id", product)
            }
            #expect(try await store.routeFulfilmentEvents(consumer: "test", count: 2) == 2)
            #expect(try await store.routeFulfilmentEvents(consumer: "test") == 1)
            #expect(try await store.routeFulfilmentEvents(consumer: "test") == 0)
            let ann = try await store.redis.send("LRANGE", keys.webhookEvents(user: "ann"), "0", "-1").array?.compactMap(\.string) ?? []
            #expect(ann.compactMap { WebhookEvent(listEntry: $0)?.fields["product_id"] } == ["a1", "a2"])
            let jobs = try (try await store.redis.send("LRANGE", keys.queue(.webhook), "0", "-1").array ?? [])
                .compactMap(\.string).map { try Job.decode($0) }
            #expect(jobs.map(\.userID).sorted() == ["ann", "bob"] && jobs.allSatisfy { $0.ticket.hasPrefix("webhook:") })
            // Acknowledged in the same step: nothing pending for XAUTOCLAIM to find.
            let pending = try await store.redis.send("XPENDING", keys.fulfilment, RedisKeys.webhookGroup).array?.first?.int
            #expect(pending == 0)
            // A user with a job gets no second one.
            _ = try await store.redis.send("XADD", keys.fulfilment, "*", "event", "revoked", "user_id", "ann")
            #expect(try await store.routeFulfilmentEvents(consumer: "test") == 1)
            #expect(try await store.redis.send("LLEN", keys.queue(.webhook)).int == 2)
        }
    }

    @Test func everyEventIsDeliveredSignedInOrderPerUserAndAFailingUserHoldsUpNobody() async throws {
        try await Self.withReceiver { pipeline, receiver in
            receiver.fail(["slow"])
            var tickets: [String] = []
            for index in 0..<3 {
                tickets.append(try await pipeline.submit(receipt([gold("slow-\(index)")]), user: "slow"))
                tickets.append(try await pipeline.submit(receipt([gold("fast-\(index)")]), user: "fast"))
            }
            for ticket in tickets { _ = try await pipeline.terminal(ticket) }
            // The fast user's three events arrive while the slow user's first keeps failing.
            let first = try await receiver.deliveries(until: { all in all.filter { $0.accepted && $0.fields["user_id"] == "fast" }.count == 3 })
            #expect(first.filter { $0.accepted && $0.fields["user_id"] == "slow" }.isEmpty)
            receiver.fail([])
            let all = try await receiver.deliveries(until: { all in all.filter { $0.accepted }.count == 6 })
            let stream = try await pipeline.fulfilments()
            #expect(stream.count == 6)
            let verifier = WebhookVerifier(secret: Self.secret)
            let now = Int64(Date().timeIntervalSince1970)
            for delivery in all {
                #expect(verifier.isValid(header: delivery.signature, body: delivery.body, nowSeconds: now))
                #expect(delivery.fields["id"] == delivery.eventID && delivery.fields["type"] == "granted")
                #expect(delivery.fields["created_at"]?.hasPrefix("20") == true && delivery.fields["ticket"] != nil)
            }
            #expect(!verifier.isValid(header: all[0].signature, body: all[0].body + [0x20], nowSeconds: now))
            #expect(!WebhookVerifier(secret: "another-secret-0123456").isValid(header: all[0].signature, body: all[0].body, nowSeconds: now))
            // Each event accepted once; the slow user's in stream order, its retries under the same id.
            let accepted = all.filter(\.accepted)
            #expect(Set(accepted.map(\.eventID)).count == 6)
            let slow = accepted.filter { $0.fields["user_id"] == "slow" }.map(\.eventID)
            #expect(slow == slow.sorted { Self.order($0) < Self.order($1) })
            #expect(Set(slow.compactMap { id in all.first { $0.eventID == id }?.fields["transaction_id"] }) == ["slow-0", "slow-1", "slow-2"])
            let failedIDs = Set(all.filter { !$0.accepted }.map(\.eventID))
            #expect(!failedIDs.isEmpty && failedIDs.isSubset(of: Set(slow)))
            // Done: no job, list or ticket left.
            try await until("the delivery jobs end", within: .seconds(10)) {
                try await pipeline.redis.send("SCARD", pipeline.store.keys.webhookBusy).int == 0
            }
            #expect(try await pipeline.store.ticket(pipeline.store.keys.webhookTicket(user: "slow")) == nil)
        }
    }

    @Test func anEventUndeliveredPastItsMaxAgeIsDeadLetteredThenReplayedUnderItsId() async throws {
        try await Self.withReceiver(maxAgeSeconds: 1) { pipeline, receiver in
            receiver.fail(["gone"])
            _ = try await pipeline.terminal(try await pipeline.submit(receipt([gold("gone-0")]), user: "gone"))
            let keys = pipeline.store.keys
            var letter: DeadLetter?
            try await until("the event is dead-lettered", within: .seconds(15)) {
                letter = try await pipeline.store.deadLetters(limit: 10).compactMap { try? DeadLetter.decode($0) }
                    .first { $0.reason == WebhookHandler.expiredReason }
                return letter != nil
            }
            let dead = try #require(letter)
            #expect(dead.stage == "webhook" && dead.ticket?.hasPrefix("webhook-event:") == true)
            // The dead event's id is in its replay ticket; any attempt made before it expired was for it
            // (on a loaded machine it may expire before its first attempt).
            let failedID = String(try #require(dead.ticket).dropFirst("webhook-event:".count))
            #expect(receiver.deliveries.allSatisfy { $0.eventID == failedID && !$0.accepted })
            // The user's job ended with it: nothing blocks their next event.
            try await until("the user's job ends", within: .seconds(10)) {
                try await pipeline.redis.send("SCARD", keys.webhookBusy).int == 0
            }
            receiver.fail([])
            let entry = try #require(try await pipeline.store.deadLetters(limit: 10).first { $0.contains(WebhookHandler.expiredReason) })
            #expect(try await pipeline.store.replay(entry: entry, ttl: .seconds(60)))
            let all = try await receiver.deliveries(until: { all in all.contains { $0.accepted } })
            #expect(all.filter(\.accepted).map(\.eventID) == [failedID])
        }
    }

    static func order(_ id: String) -> (Int64, Int64) {
        let parts = id.split(separator: "-").map { Int64($0) ?? 0 }
        return (parts.first ?? 0, parts.last ?? 0)
    }
}
