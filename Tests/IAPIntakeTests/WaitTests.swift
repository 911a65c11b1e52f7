import AsyncHTTPClient
import Foundation
import IAPIntake
import PipelineCore
import RedisClient
import TestSupport
import PipelineTestSupport
import Testing

/// `GET /v1/receipts/{ticket}?wait=`: a client waits for its result instead of polling, served by
/// one subscription per intake.
@Suite(.serialized) struct WaitTests {
    @Test func aWaitingClientGetsItsResultWhenItComes() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let ticket = try await pipeline.submit(receipt([gold("w1")]))
            let answer = Task {
                // The longest wait (the harness's client outwaits it): on a loaded machine the
                // stages starting and granting took more than 10 s (seen once).
                let reply = try await pipeline.get("/v1/receipts/\(ticket)?wait=30")
                return (reply.status, reply.json["status"] as? String)
            }
            try await until("the client waits") { pipeline.waiters.waiting == 1 }
            for stage in Stage.allCases { pipeline.start(stage) }
            let (status, ticketStatus) = try await answer.value
            #expect(status == 200 && ticketStatus == "granted")
            try await until("the wait is over") { pipeline.waiters.waiting == 0 }
        }
    }

    /// A wait that ends answers with the ticket as it is; a terminal ticket is answered at once.
    @Test func aWaitEndsWithTheTicketAsItIs() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let ticket = try await pipeline.submit(receipt([gold("w2")]))
            let waited = try await pipeline.get("/v1/receipts/\(ticket)?wait=1")
            #expect(waited.status == 200 && waited.json["status"] as? String == "queued")
            for stage in Stage.allCases { pipeline.start(stage) }
            _ = try await pipeline.terminal(ticket)
            let done = try await pipeline.get("/v1/receipts/\(ticket)?wait=30")
            #expect(done.json["status"] as? String == "granted")
            #expect(try await pipeline.get("/v1/receipts/AAAAAAAAAAAAAAAAAAAAAA?wait=5").status == 404)
        }
    }

    @Test func aWaitOutsideZeroToThirtySecondsIsRefused() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let ticket = try await pipeline.submit(receipt([gold("w3")]))
            for wait in ["31", "-1", "abc", "1.5", ""] {
                let reply = try await pipeline.get("/v1/receipts/\(ticket)?wait=\(wait)")
                #expect(reply.status == 400, "wait=\(wait)")
                #expect((reply.json["error"] as? [String: Any])?["code"] as? String == "invalid_wait", "wait=\(wait)")
            }
            #expect(try await pipeline.get("/v1/receipts/\(ticket)?wait=0").json["status"] as? String == "queued")
        }
    }

    /// An intake nobody waits on reads no results: its subscription comes with the first waiter,
    /// goes once the last has been gone for the linger, and comes back with the next.
    @Test func theResultsAreSubscribedToOnlyWhileSomeoneWaits() async throws {
        try await withRedis { redis, server in
            let keys = RedisKeys(prefix: "iap")
            let waiters = TicketWaiters(redis: server.configuration, keys: keys, logger: testLogger, linger: .milliseconds(200))
            let running = Task { try await waiters.run() }
            @Sendable func subscribers() async throws -> Int64 {
                let reply: RedisReply = try await redis.send("PUBSUB", "SHARDNUMSUB", keys.results)
                return reply.array?.last?.int ?? -1
            }
            #expect(try await subscribers() == 0)
            let first = try #require(waiters.register("T1"))
            try await until("the first waiter's subscription") { try await subscribers() == 1 }
            // Subscribing wakes the waiter: whatever was published before it is read again.
            var changes = first.changes.makeAsyncIterator()
            #expect(await changes.next() != nil)
            waiters.cancel(first)
            try await until("no subscription once nobody waits") { try await subscribers() == 0 }
            let second = try #require(waiters.register("T2"))
            try await until("subscribed again for the next waiter") { try await subscribers() == 1 }
            waiters.cancel(second)
            running.cancel()
            try await running.value
        }
    }

    /// Two hundred clients waiting on one intake: one Redis subscription, every one answered.
    @Test func manyWaitingClientsShareOneSubscription() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            var tickets: [String] = []
            for index in 0..<200 { tickets.append(try await pipeline.submit(receipt([gold("many-\(index)")]))) }
            // A client with room for every waiting request at once (the harness's keeps a few connections).
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)
            let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            let base = pipeline.intake.baseURL
            let answers = Task {
                try await withThrowingTaskGroup(of: String?.self) { group in
                    for ticket in tickets {
                        group.addTask {
                            let response = try await http.execute(HTTPClientRequest(url: base + "/v1/receipts/\(ticket)?wait=25"), timeout: .seconds(30))
                            let body = try await response.body.collect(upTo: 1 << 16)
                            let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
                            return json?["status"] as? String
                        }
                    }
                    return try await group.reduce(into: [String?]()) { $0.append($1) }
                }
            }
            do {
                try await until("every client waits") { pipeline.waiters.waiting == 200 }
                try await until("one subscription serves them all") {
                    try await pipeline.redis.send("PUBSUB", "SHARDNUMSUB", pipeline.configuration.keys.results).array?.last?.int == 1
                }
                for stage in Stage.allCases { pipeline.start(stage) }
                let statuses = try await answers.value
                #expect(statuses.count == 200 && statuses.allSatisfy { $0 == "granted" })
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }
}
