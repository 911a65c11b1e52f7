import AppStoreServerAPI
import AppleJWS
import AppleSimulator
@preconcurrency import Crypto
import Foundation
import PipelineCore
import IAPStages
import IAPOperations
import RedisClient
import TestSupport
import PipelineTestSupport
import Testing

/// The App Store Server API: a transaction id alone is looked up (production, then sandbox on
/// 4040010), verified like any signed data, and granted through the same path; Apple's error
/// classes, its 429 holds and our rate budget apply to the whole fleet.
@Suite(.serialized) struct ServerAPITests {
    static func transaction(_ id: String, environment: String = "Production", product: String = "gold.100") -> JWSTransaction {
        JWSTransaction(
            transactionID: id, bundleID: PipelineHarness.bundleID, productID: product,
            purchaseDate: Int64(Date().timeIntervalSince1970 * 1000), type: "Consumable", environment: environment)
    }

    func lookUp(_ pipeline: PipelineHarness, _ id: String, user: String = "player-1") async throws -> Ticket {
        let reply = try await pipeline.post(["transaction_id": id, "user_id": user])
        #expect(reply.status == 202)
        return try await pipeline.terminal(try #require(reply.json["ticket"] as? String))
    }

    @Test func aTransactionIDAloneIsLookedUpVerifiedAndGrantedOnce() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            try pipeline.simulator.serverAPI.register(Self.transaction("3000000000000001"))
            let ticket = try await lookUp(pipeline, "3000000000000001")
            #expect(ticket.status == .granted && ticket.environment == "Production")
            #expect(ticket.transactions.map(\.transactionID) == ["3000000000000001"])
            // Another user naming the same transaction: one grant, ever.
            let other = try await lookUp(pipeline, "3000000000000001", user: "player-2")
            #expect(other.status == .duplicate)
            #expect(try await pipeline.fulfilments().count == 1)
            #expect(pipeline.simulator.serverAPI.callCounts()["Sandbox transaction_info"] == nil)
        }
    }

    @Test func aSandboxTransactionIsFoundAfterProductionSays4040010() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            try pipeline.simulator.serverAPI.register(Self.transaction("3000000000000002", environment: "Sandbox"))
            let ticket = try await lookUp(pipeline, "3000000000000002")
            #expect(ticket.status == .granted && ticket.environment == "Sandbox")
            let counts = pipeline.simulator.serverAPI.callCounts()
            #expect(counts["Production transaction_info"] == 1 && counts["Sandbox transaction_info"] == 1)
        }
    }

    /// App Review and launch day buy in sandbox, while production refuses an app it never
    /// released (401): the lookup tries sandbox once, and what it finds there is a sandbox
    /// purchase like any other (`IAP_SANDBOX` decides).
    @Test func aLookupProductionRefusesForAnUnreleasedAppIsTriedInSandbox() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let api = pipeline.simulator.serverAPI
            api.setUnreleased([PipelineHarness.bundleID])
            try api.register(Self.transaction("3000000000000011", environment: "Sandbox"))
            let ticket = try await lookUp(pipeline, "3000000000000011")
            #expect(ticket.status == .granted && ticket.environment == "Sandbox")
            let counts = api.callCounts()
            #expect(counts["Production transaction_info"] == nil && counts["Sandbox transaction_info"] == 1)
            // Not in sandbox either: production's refusal stands (we could not ask it), a dead letter.
            let unknown = try await lookUp(pipeline, "3000000000000012")
            #expect(unknown.status == .dead && unknown.reason == "apple_api_unauthorized")
        }
        try await withPipeline(serverAPI: true, environment: ["IAP_SANDBOX": "deny"]) { pipeline in
            let api = pipeline.simulator.serverAPI
            api.setUnreleased([PipelineHarness.bundleID])
            try api.register(Self.transaction("3000000000000013", environment: "Sandbox"))
            let ticket = try await lookUp(pipeline, "3000000000000013")
            #expect(ticket.status == .rejected && ticket.environment == "Sandbox", "\(ticket)")
            #expect(ticket.transactions.first?.reason == "sandbox_not_allowed", "\(ticket)")
            #expect(try await pipeline.fulfilments().filter { $0["event"] == "granted" }.isEmpty)
        }
    }

    @Test func anUnknownTransactionIsRejectedAsNotFound() async throws {
        try await withPipeline(serverAPI: true) { pipeline in
            let ticket = try await lookUp(pipeline, "3999999999999999")
            #expect(ticket.status == .rejected && ticket.reason == "transaction_not_found")
            #expect(try await pipeline.fulfilments().isEmpty)
        }
    }

    @Test func aTokenAppleRefusesIsOurConfigurationAndDeadLetters() async throws {
        try await withPipeline(serverAPI: true, simulatorKnowsOurKey: false) { pipeline in
            try pipeline.simulator.serverAPI.register(Self.transaction("3000000000000003"))
            let ticket = try await lookUp(pipeline, "3000000000000003")
            #expect(ticket.status == .dead && ticket.reason == "apple_api_unauthorized")
            #expect(try await pipeline.length(pipeline.configuration.keys.dead) == 1)
        }
    }

    @Test func applesUnknownErrorIsRetriedUntilItAnswers() async throws {
        try await withPipeline(maxAttempts: 5, serverAPI: true) { pipeline in
            try pipeline.simulator.serverAPI.register(Self.transaction("3000000000000004"))
            pipeline.simulator.serverAPI.setFaults(SimulatedAPIFaults(serverErrors: 2))
            let ticket = try await lookUp(pipeline, "3000000000000004")
            #expect(ticket.status == .granted && ticket.attempts == 3)
        }
    }

    @Test func a429HoldsTheEndpointForTheWholeFleetUntilRetryAfter() async throws {
        // Apple's faults go to whichever call comes next: no Finish Transaction errand may take them.
        try await withPipeline(maxAttempts: 5, serverAPI: true, environment: ["IAP_FINISH_TRANSACTIONS": "off"]) { pipeline in
            let api = pipeline.simulator.serverAPI
            for id in ["3000000000000005", "3000000000000006"] { try api.register(Self.transaction(id)) }
            api.setFaults(SimulatedAPIFaults(rateLimited: 1, retryAfterMs: 1500))
            let first = try await lookUp(pipeline, "3000000000000005")
            // The 429 cost no attempt: the job came back when Apple allowed it.
            #expect(first.status == .granted && first.attempts == 1)
            let times = api.callTimes("Production transaction_info")
            try #require(times.count >= 2)
            // The call after the 429 waited out Apple's Retry-After (1.5 s after the refused call).
            #expect(times[1] - times[0] >= 1500 - 50)
            // A second lookup started inside the hold would also have waited; the hold is in Redis
            // for every process to see.
            api.setFaults(SimulatedAPIFaults(rateLimited: 1, retryAfterMs: 60_000))
            let refused = await pipeline.lookupClient!.transactionInfo("3000000000000006", environment: .production)
            guard case .transient(let reason, _, let retryAfterMs) = refused else {
                Issue.record("expected a 429 to be a retry, got \(refused)")
                return
            }
            #expect(reason == "apple_api_rate_limited" && (retryAfterMs ?? 0) > 50_000)
            let calls = api.callCounts()["Production transaction_info"]
            let held = await pipeline.lookupClient!.transactionInfo("3000000000000006", environment: .production)
            #expect(api.callCounts()["Production transaction_info"] == calls, "a held endpoint must not be called")
            guard case .transient(_, _, let wait) = held else {
                Issue.record("expected the hold to answer a retry, got \(held)")
                return
            }
            #expect((wait ?? 0) > 50_000)
            let hold = try await pipeline.redis.send(
                "PTTL", pipeline.configuration.keys.apiHold(environment: "production", endpoint: "transaction_info")).int
            #expect((hold ?? 0) > 50_000)
        }
    }
}

@Suite struct ServerAPITokenTests {
    @Test func theTokenCarriesApplesClaimsAndVerifiesWithThePublicKey() throws {
        let key = P256.Signing.PrivateKey()
        let issuer = ServerAPIToken(keyID: "ABC123DEFG", issuerID: "57246542-96fe-1a63-e053-0824d011072a", privateKey: key, bundleID: "com.example.game")
        let now = Date(timeIntervalSince1970: 1_763_800_000)
        let token = try issuer.token(now: now)
        let parts = token.split(separator: ".")
        try #require(parts.count == 3)
        let header = try JSONDecoder().decode(CompactJWSSigner.Header.self, from: Data(Base64URL.decode(parts[0])!))
        #expect(header == .init(alg: "ES256", kid: "ABC123DEFG", typ: "JWT"))
        let claims = try JSONDecoder().decode(ServerAPIToken.Claims.self, from: Data(Base64URL.decode(parts[1])!))
        #expect(claims.iss == "57246542-96fe-1a63-e053-0824d011072a" && claims.aud == "appstoreconnect-v1")
        #expect(claims.bid == "com.example.game" && claims.iat == 1_763_800_000)
        #expect(claims.exp - claims.iat == 300)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Base64URL.decode(parts[2])!)
        #expect(key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        // A new token for every request (Apple's advice), even within one second.
        #expect(try issuer.token(now: now) != token)
    }
}

@Suite struct RedisAPIRateLimiterTests {
    /// Apple counts per app: with several apps, Apple's 429 for one app holds that app alone.
    @Test func eachAppHasItsOwnBudgetAndHolds() async throws {
        try await withRedis { redis, _ in
            let keys = RedisKeys(prefix: "t")
            let store = PipelineStore(redis: redis, keys: keys)
            let game = RedisAPIRateLimiter(store: store, maxPerSecond: 10, app: "com.example.game")
            let other = RedisAPIRateLimiter(store: store, maxPerSecond: 10, app: "com.example.other")
            let hour = Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000
            try await game.hold(endpoint: .transactionInfo, environment: .production, untilMs: hour)
            #expect(try await game.permit(endpoint: .transactionInfo, environment: .production) != nil)
            #expect(try await other.permit(endpoint: .transactionInfo, environment: .production) == nil)
            // The holds' keys name the app (a hold lives until it ends: an hour here).
            #expect(try await redis.send("EXISTS", keys.apiHold(environment: "production", endpoint: "transaction_info:com.example.game")).int == 1)
            #expect(try await redis.send("EXISTS", keys.apiHold(environment: "production", endpoint: "transaction_info")).int == 0)
            // One app's limiter (no apps file) keeps today's keys, and is not held by an app's hold.
            let single = RedisAPIRateLimiter(store: store, maxPerSecond: 10)
            #expect(try await single.permit(endpoint: .transactionInfo, environment: .production) == nil)
            try await single.hold(endpoint: .transactionInfo, environment: .production, untilMs: hour)
            #expect(try await redis.send("EXISTS", keys.apiHold(environment: "production", endpoint: "transaction_info")).int == 1)
        }
    }

    @Test func twoProcessesShareOneBudgetAndOneHold() async throws {
        try await withRedis { redis, server in
            // A second connection pool stands in for a second verifier process.
            let other = RedisClient(configuration: server.configuration, poolSize: 2)
            defer { Task { await other.close() } }
            let keys = RedisKeys(prefix: "t")
            let first = RedisAPIRateLimiter(store: PipelineStore(redis: redis, keys: keys), maxPerSecond: 10)
            let second = RedisAPIRateLimiter(store: PipelineStore(redis: other, keys: keys), maxPerSecond: 10)
            let started = ContinuousClock.now
            let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<30 {
                    let limiter = index.isMultiple(of: 2) ? first : second
                    group.addTask { try await limiter.permit(endpoint: .transactionInfo, environment: .production) == nil }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            // Ten a window, fleet-wide. (A machine so loaded that the thirty asks span several
            // windows grants ten in each, never more.)
            let windows = Int((ContinuousClock.now - started) / RedisAPIRateLimiter.window) + 1
            if windows == 1 { #expect(granted == 10) } else { #expect(granted >= 10 && granted <= 10 * windows, "\(granted) in \(windows) windows") }
            // Sandbox has its own budget, a tenth of production's: one call a window. (A machine so
            // loaded that the two asks are a window apart has nothing to refuse: then only the first counts.)
            let asked = ContinuousClock.now
            #expect(try await first.permit(endpoint: .transactionInfo, environment: .sandbox) == nil)
            let refused = try await second.permit(endpoint: .transactionInfo, environment: .sandbox) != nil
            if ContinuousClock.now - asked < RedisAPIRateLimiter.window { #expect(refused) }
            // Another endpoint is not held up by this one.
            #expect(try await second.permit(endpoint: .transactionHistory, environment: .production) == nil)
            // A hold set by one process stops the other until it ends, even with budget left.
            // (Ten minutes: however slow the machine, the hold cannot end inside this test.)
            let until = Int64(Date().timeIntervalSince1970 * 1000) + 600_000
            try await first.hold(endpoint: .subscriptionStatuses, environment: .production, untilMs: until)
            // The wait is what is left of the hold (measured after the answer: a slow machine only shortens it).
            func leftOfHold() -> Duration { .milliseconds(until - Int64(Date().timeIntervalSince1970 * 1000)) }
            let wait = try #require(try await second.permit(endpoint: .subscriptionStatuses, environment: .production))
            #expect(wait >= leftOfHold() - .milliseconds(100) && wait <= .seconds(600))
            // An earlier hold never shortens a later one: the wait is still the later hold's, not
            // the earlier one's (five minutes shorter).
            try await second.hold(endpoint: .subscriptionStatuses, environment: .production, untilMs: until - 300_000)
            let later = try #require(try await first.permit(endpoint: .subscriptionStatuses, environment: .production))
            #expect(later >= leftOfHold() - .milliseconds(100))
        }
    }
}

@Suite struct RetryAfterTests {
    @Test func applesUnixMillisecondsAndSecondsFromNowAreBothRead() {
        let now = Date(timeIntervalSince1970: 1_763_800_000)
        #expect(ServerAPIClient.retryAfter("1763800005000", now: now) == 1_763_800_005_000)
        #expect(ServerAPIClient.retryAfter("3", now: now) == 1_763_800_003_000)
        #expect(ServerAPIClient.retryAfter(nil, now: now) == 1_763_800_001_000)
        #expect(ServerAPIClient.retryAfter("soon", now: now) == 1_763_800_001_000)
    }
}
