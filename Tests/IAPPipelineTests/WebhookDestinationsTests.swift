import Foundation
import IAPClient
import IAPOperations
import IAPStages
import PipelineCore
import PipelineTestSupport
import RedisClient
import TestSupport
import Testing

/// Several webhook destinations (`IAP_WEBHOOKS_FILE`): each its own consumer group, filter,
/// lists, jobs and share of the slots.
@Suite(.serialized) struct WebhookDestinationsTests {
    static let secrets = ["live": "live-secret-0123456789", "sandbox": "sandbox-secret-012345", "slow": "slow-secret-0123456789",
                          "fast": "fast-secret-0123456789"]

    /// A pipeline whose webhook stage delivers to one receiver per destination, `filters` each
    /// destination's members beyond its URL and secret.
    static func withDestinations(
        _ filters: [String: String], environment: [String: String] = [:],
        _ body: (PipelineHarness, [String: WebhookReceiver]) async throws -> Void
    ) async throws {
        var receivers: [String: WebhookReceiver] = [:]
        var servers: [RunningServer] = []
        var members: [String] = []
        for (name, filter) in filters.sorted(by: { $0.key < $1.key }) {
            let receiver = WebhookReceiver()
            let server = try await RunningServer.start { receiver.application(onServerRunning: $0) }
            receivers[name] = receiver
            servers.append(server)
            members.append(#""\#(name)": {"url": "\#(server.baseURL)/hook", "secret": "\#(secrets[name]!)"\#(filter)}"#)
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hooks-\(UUID().uuidString).json")
        try Data("{\(members.joined(separator: ", "))}".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var settings = environment
        settings["IAP_WEBHOOKS_FILE"] = file.path
        do {
            try await withPipeline(environment: settings) { pipeline in try await body(pipeline, receivers) }
        } catch {
            for receiver in receivers.values { receiver.release() }
            for server in servers { await server.stop() }
            throw error
        }
        for server in servers { await server.stop() }
    }

    @Test func routingGivesEachDestinationTheEntriesItsFilterAdmitsThroughItsOwnGroupListsAndJobs() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let store = pipeline.store
            let keys = store.keys
            let entries: [[String]] = [
                ["event", "granted", "user_id", "ann", "environment", "Production", "bundle_id", "com.a", "product_id", "p1"],
                ["event", "granted", "user_id", "bob", "environment", "Sandbox", "bundle_id", "com.a", "product_id", "p2"],
                ["event", "expired", "user_id", "ann", "environment", "Production", "product_id", "p3"],
                ["event", "revoked", "user_id", "ann", "environment", "Production", "bundle_id", "com.b", "product_id", "p4"],
                ["event", "granted", "user_id", "cal", "product_id", "p5", "source", "operator"],
            ]
            for fields in entries { _ = try await store.redis.send(RedisCommand(["XADD", keys.fulfilment, "*"] + fields)) }
            let money = WebhookFilter(apps: ["com.a"], events: ["granted", "revoked"])
            let live = WebhookFilter(environments: ["Production"])
            #expect(try await store.routeFulfilmentEvents(to: "money", filter: money, consumer: "t") == 5)
            #expect(try await store.routeFulfilmentEvents(to: "live", filter: live, consumer: "t") == 5)
            #expect(try await store.routeFulfilmentEvents(consumer: "t") == 5)
            #expect(try await store.routeFulfilmentEvents(to: "money", filter: money, consumer: "t") == 0)

            func products(_ user: String, _ destination: String) async throws -> [String] {
                let listed = try await store.redis.send("LRANGE", keys.webhookEvents(user: user, to: destination), "0", "-1")
                return (listed.array ?? []).compactMap { $0.string.flatMap(WebhookEvent.init(listEntry:))?.fields["product_id"] }
            }
            // money: granted or revoked of com.a (an entry naming no app passes); live: Production (or none named).
            #expect(try await products("ann", "money") == ["p1"])
            #expect(try await products("bob", "money") == ["p2"])
            #expect(try await products("cal", "money") == ["p5"])
            #expect(try await products("ann", "live") == ["p1", "p3", "p4"])
            #expect(try await products("bob", "live") == [])
            #expect(try await products("cal", "live") == ["p5"])
            #expect(try await products("ann", "default") == ["p1", "p3", "p4"])
            #expect(try await products("bob", "default") == ["p2"])
            // A job per user and destination, with its own ticket, and the destination on the job.
            let jobs = try await store.redis.send("LRANGE", keys.queue(.webhook), "0", "-1").array?.compactMap(\.string)
                .map(Job.decode) ?? []
            let byTicket = Dictionary(uniqueKeysWithValues: jobs.map { ($0.ticket, $0.webhookDestination) })
            #expect(byTicket == [
                "webhook@money:ann": "money", "webhook@money:bob": "money", "webhook@money:cal": "money",
                "webhook@live:ann": "live", "webhook@live:cal": "live",
                "webhook:ann": "default", "webhook:bob": "default", "webhook:cal": "default",
            ])
            for job in jobs { #expect(try await store.ticket(job.ticket) != nil) }
            #expect(try await store.redis.send("SMEMBERS", keys.webhookBusy(to: "live")).array?.compactMap(\.string).sorted() == ["ann", "cal"])
            #expect(try await store.redis.send("SMEMBERS", keys.webhookDestinations).array?.compactMap(\.string).sorted()
                == ["default", "live", "money"])
            // Each group read everything, nothing left pending.
            for group in ["webhook", "webhook:money", "webhook:live"] {
                #expect(try await store.redis.send("XPENDING", keys.fulfilment, group).array?.first?.int == 0)
            }
            // Erasing a user deletes their lists at every destination.
            _ = try await store.erase(user: "ann")
            for destination in ["default", "money", "live"] {
                #expect(try await store.redis.send("EXISTS", keys.webhookEvents(user: "ann", to: destination)).int == 0)
                #expect(try await store.redis.send("SISMEMBER", keys.webhookBusy(to: destination), "ann").int == 0)
            }
            #expect(try await products("bob", "money") == ["p2"], "another user's stay")
        }
    }

    @Test func twoDestinationsWithDifferentFiltersEachGetExactlyTheirEventsInOrderSignedWithTheirSecret() async throws {
        try await Self.withDestinations([
            "live": #", "environments": ["Production"], "apps": ["com.example.game"]"#,
            "sandbox": #", "environments": ["Sandbox"], "events": ["granted"]"#,
        ]) { pipeline, receivers in
            var tickets: [String] = []
            for index in 0..<3 {
                tickets.append(try await pipeline.submit(receipt([gold("live-\(index)")]), user: "ann"))
                tickets.append(try await pipeline.submit(receipt([gold("test-\(index)")], environment: "Sandbox"), user: "ann"))
            }
            for ticket in tickets { _ = try await pipeline.terminal(ticket) }
            for (name, environment) in [("live", "Production"), ("sandbox", "Sandbox")] {
                let receiver = try #require(receivers[name])
                let got = try await receiver.deliveries(until: { $0.filter(\.accepted).count >= 3 })
                #expect(got.count == 3 && got.allSatisfy { $0.fields["environment"] == environment && $0.fields["type"] == "granted" })
                #expect(got.allSatisfy { $0.fields["bundle_id"] == PipelineHarness.bundleID }, "the app, on the event")
                // In the stream's order (the grants', which concurrent workers need not make the submissions').
                let stream = try await pipeline.fulfilments().filter { $0["environment"] == environment }.compactMap { $0["transaction_id"] }
                let prefix = name == "live" ? "live-" : "test-"
                #expect(Set(stream) == Set((0..<3).map { "\(prefix)\($0)" }))
                #expect(got.compactMap { $0.fields["transaction_id"] } == stream, "in order")
                let verifier = WebhookVerifier(secret: Self.secrets[name]!)
                let now = Int64(Date().timeIntervalSince1970)
                #expect(got.allSatisfy { verifier.isValid(header: $0.signature, body: $0.body, nowSeconds: now) })
            }
            // Done: every destination's jobs end; nothing more arrives at either.
            let keys = pipeline.store.keys
            try await until("the delivery jobs end", within: .seconds(10)) {
                let busy = try await pipeline.redis.pipeline(["live", "sandbox"].map { RedisCommand("SCARD", keys.webhookBusy(to: $0)) })
                return busy.allSatisfy { $0.int == 0 }
            }
            #expect(receivers.values.allSatisfy { $0.deliveries.count == 3 })
            // `iapctl webhooks`: each destination routed to the end, nobody waiting, registered.
            let status = try await pipeline.store.webhookDestinationStatus()
            #expect(status.map(\.destination) == ["live", "sandbox"] && status.map(\.group) == ["webhook:live", "webhook:sandbox"])
            #expect(status.allSatisfy { $0.lag == 0 && $0.usersWaiting == 0 && $0.registered && $0.lastRoutedAt != nil }, "\(status)")
            let iapctl = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("iapctl")
            let (code, table) = try await runTool(iapctl.path, ["webhooks"], environment: ["IAP_REDIS_URL": pipeline.redisServer.url])
            let lines = table.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            #expect(code == 0 && lines.contains { $0.starts(with: ["sandbox", "webhook:sandbox", "0", "0"]) && $0.last == "yes" }, "\(table)")
        }
    }

    @Test func aDestinationThatHangsHoldsOnlyItsShareOfTheSlotsAndTheOtherGetsEverything() async throws {
        // A POST may hang for 120 s: without the shares the hanging destination's jobs would take
        // every slot and the other would wait that long.
        try await Self.withDestinations(["slow": "", "fast": ""], environment: ["IAP_WEBHOOK_TIMEOUT_MS": "120000"]) { pipeline, receivers in
            let (slow, fast) = (try #require(receivers["slow"]), try #require(receivers["fast"]))
            slow.hold()
            let users = (0..<12).map { "player-\($0)" }
            for user in users { _ = try await pipeline.terminal(try await pipeline.submit(receipt([gold("tx-\(user)")]), user: user)) }
            let got = try await fast.deliveries(until: { $0.filter(\.accepted).count == users.count }, within: .seconds(60))
            #expect(Set(got.compactMap { $0.fields["user_id"] }) == Set(users))
            // The hanging one holds its share (8 slots, 2 destinations: 4), never more.
            _ = try await slow.deliveries(until: { _ in slow.waiting >= 4 }, within: .seconds(30))
            #expect(slow.waiting == 4)
            slow.release()
            let late = try await slow.deliveries(until: { $0.filter(\.accepted).count == users.count }, within: .seconds(60))
            #expect(Set(late.map(\.eventID)).count == users.count, "each event once")
        }
    }
    @Test func aJobToADestinationRemovedFromRedisAndTheFileEnds() async throws {
        try await withPipeline(startWorkers: false, environment: [
            "IAP_WEBHOOK_URL": "http://127.0.0.1:9/unused", "IAP_WEBHOOK_SECRET": Self.secrets["live"]!,
        ]) { pipeline in
            let store = pipeline.store
            let keys = store.keys
            for user in ["zed", "yan"] {
                _ = try await store.redis.send("XADD", keys.fulfilment, "*", "event", "granted", "user_id", user)
            }
            #expect(try await store.routeFulfilmentEvents(to: "gone", consumer: "t") == 2)
            // `gone` removed as docs/webhooks.md says (its name and its users' lists), and in no worker's file.
            _ = try await store.redis.send("SREM", keys.webhookDestinations, "gone")
            _ = try await store.redis.send("DEL", keys.webhookEvents(user: "zed", to: "gone"), keys.webhookEvents(user: "yan", to: "gone"))
            pipeline.start(.webhook)
            try await until("the removed destination's jobs end", within: .seconds(20)) {
                try await store.redis.send("SCARD", keys.webhookBusy(to: "gone")).int == 0
            }
            #expect(try await store.ticket(keys.webhookTicket(user: "zed", to: "gone")) == nil)
        }
    }
}
