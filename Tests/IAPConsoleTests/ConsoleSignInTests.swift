import Crypto
import Foundation
@testable import IAPConsole
import IAPSettings
import IAPStages
import PipelineCore
import PipelineTestSupport
import PlainJSON
import Testing

/// Sign-in's guards: failures counted per name across console processes, a name refused after
/// too many, and a Secure cookie when browsers reach the console over https.
@Suite(.serialized) struct ConsoleSignInTests {
    @Test func aNameThatFailedTooOftenIsRefusedBeforeItsPasswordIsChecked() async throws {
        try await ConsoleHarness.withConsole { pipeline, console in
            for _ in 0..<10 {
                #expect(try await console.send(.POST, "/login", form: "username=vera&password=guess").status == 401)
            }
            let right = "username=vera&password=correct+horse+battery+staple"
            let refused = try await console.send(.POST, "/login", form: right)
            #expect(refused.status == 429 && refused.headers["set-cookie"] == nil && refused.body.contains("Too many failed sign-ins"))
            let wait = try #require(refused.headers["retry-after"].flatMap(Int.init))
            #expect((1...900).contains(wait))
            // Counted in Redis under the name's hash (never the name), expiring with its window.
            let key = pipeline.store.keys.consoleSignInFailures(Hex.encode(SHA256.hash(data: Array("vera".utf8))))
            #expect(try await pipeline.redis.send("GET", key).string == "10")
            let ttl = try #require(try await pipeline.redis.send("TTL", key).int)
            #expect((1...900).contains(ttl))
            // Another name is not held back; a right password resets its own count.
            _ = try await console.send(.POST, "/login", form: "username=oscar&password=guess")
            _ = try await console.signIn("oscar")
            let oscarKey = pipeline.store.keys.consoleSignInFailures(Hex.encode(SHA256.hash(data: Array("oscar".utf8))))
            #expect(try await pipeline.redis.send("EXISTS", oscarKey) == .integer(0))
            // The window's end (an admin's DEL ends it early) lets vera in again.
            _ = try await pipeline.redis.send("DEL", key)
            _ = try await console.signIn("vera")
            let empty = try await console.send(.POST, "/login", form: "username=&password=")
            #expect(empty.status == 400 || empty.status == 401)
        }
    }

    @Test func overHTTPSTheSessionCookieIsSecure() async throws {
        try await ConsoleHarness.withConsole(secureCookie: true) { _, console in
            let reply = try await console.send(.POST, "/login", form: "username=vera&password=correct+horse+battery+staple")
            let cookie = try #require(reply.headers["set-cookie"])
            #expect(cookie.contains("Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "\(cookie)")
        }
        try await ConsoleHarness.withConsole { _, console in
            let reply = try await console.send(.POST, "/login", form: "username=vera&password=correct+horse+battery+staple")
            #expect(reply.headers["set-cookie"]?.contains("Secure") == false)
        }
    }

    @Test func theOriginSettingNamesWhereBrowsersReachTheConsole() throws {
        let proxied = try ConsoleSettings(reading: SettingSource(environment: ["IAP_CONSOLE_ORIGIN": "https://Console.Example.com/"]))
        #expect(proxied.origin == "https://console.example.com" && proxied.origins == ["https://console.example.com"] && proxied.secureCookie)
        let local = try ConsoleSettings(reading: SettingSource(environment: ["IAP_CONSOLE_PORT": "9000"]))
        #expect(local.origins == ["http://127.0.0.1:9000", "http://localhost:9000"] && !local.secureCookie)
        let plain = try ConsoleSettings(reading: SettingSource(environment: ["IAP_CONSOLE_ORIGIN": "http://10.0.0.5:8081"]))
        #expect(plain.origins == ["http://10.0.0.5:8081"] && !plain.secureCookie)
        for bad in ["console.example.com", "ftp://x", "https://x/console", "https://user@x", "https://", "https://x?a=1"] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try ConsoleSettings(reading: SettingSource(environment: ["IAP_CONSOLE_ORIGIN": bad]))
            }
        }
    }
}

/// The audit of console actions: who did what, on what, how it ended, from the session's name.
@Suite(.serialized) struct ConsoleAuditTests {
    @Test func everyActionIsRecordedInTheSessionsNameAndShownToOperators() async throws {
        try await ConsoleHarness.withConsole(startWorkers: false) { pipeline, console in
            _ = try await console.send(.POST, "/login", form: "username=vera&password=guess")
            _ = try await console.send(.POST, "/login", form: "username=mallory-\(UUID().uuidString)&password=guess")
            let vera = try await console.signIn("vera")
            let letter = DeadLetter(job: "{}", stage: "grant", reason: "poison", error: "e", attempts: 1, at: 1_795_000_000_000, ticket: "t-a").encoded()
            _ = try await pipeline.redis.send("LPUSH", pipeline.store.keys.dead, letter)
            let ada = try await console.signIn("ada")
            let preview = try await console.send(.GET, "/dead/preview?bucket=0&start=0&stage=grant&reason=poison", cookie: ada)
            #expect(try await console.send(.POST, "/dead/purge", form: ConsoleDeadLetterTests.confirmation(in: preview.body) + "&user=mallory", cookie: ada).status == 200)

            #expect(try await console.send(.GET, "/audit", cookie: vera).status == 403)
            let oscar = try await console.signIn("oscar")
            let json = try JSONValue(parsing: try await console.send(.GET, "/audit", cookie: oscar, headers: [("Accept", "application/json")]).body)
            let rows = (json["entries"]?.array ?? []).map { row in
                ["user", "action", "target", "outcome"].map { row[$0]?.string ?? "" }.joined(separator: "|")
            }
            #expect(rows == [
                "oscar|sign-in||signed in as operator",
                "ada|dead.purge|bucket 0: 1 previewed|done 1, missing 0, skipped 0",
                "ada|sign-in||signed in as admin",
                "vera|sign-in||signed in as viewer",
                "vera|sign-in||refused",
            ], "newest first, and no entry for a name nobody has: \(rows)")
            let page = try await console.send(.GET, "/audit", cookie: oscar)
            #expect(page.status == 200 && page.body.contains("<td>dead.purge</td>") && page.body.contains("XREVRANGE"))
            #expect(try await console.send(.GET, "/audit?before=not-an-id", cookie: oscar).status == 200)
        }
    }
}

@Suite struct ConsoleOverviewLineTests {
    @Test func aSweepsLeaseIsSaidAsItStands() {
        let now: Int64 = 1_795_000_000_000
        #expect(ConsolePages.sweep("refund sweep", [:], now: now) == "refund sweep: has not run (off, or no notifier yet)")
        let running = ConsolePages.sweep("notification sweep", ["owner": "n1", "lease_until": String(now + 5000), "next_at": String(now + 3_600_000)], now: now)
        #expect(running == "notification sweep: running on n1, its lease until 2026-11-18T11:06:45Z, next at 2026-11-18T12:06:40Z", "\(running)")
        #expect(ConsolePages.sweep("notification sweep", ["owner": "n1", "lease_until": String(now - 1)], now: now) == "notification sweep: idle")
    }
}

@Suite(.serialized) struct ConsoleOverviewTests {
    /// Apple's budget on the overview: the calls of the last second per endpoint, and a hold
    /// Apple's 429 set, said as it stands.
    @Test func theOverviewShowsApplesBudgetInUseAndAnyHold() async throws {
        try await ConsoleHarness.withConsole(startWorkers: false) { pipeline, console in
            let keys = pipeline.store.keys
            let now = currentTimeMs()
            // Times an hour away either side, so the page's own clock reads the same however slow the machine.
            _ = try await pipeline.redis.send(
                "ZADD", keys.apiPermits(environment: "production", endpoint: "transaction_info"), String(now + 3_600_000), "c1",
                String(now + 3_599_000), "c2", String(now - 3_600_000), "old")
            _ = try await pipeline.redis.send("SET", keys.apiHold(environment: "sandbox", endpoint: "order_lookup"), String(now + 3_600_000), "PX", "3600000")
            let vera = try await console.signIn("vera")
            let overview = try JSONValue(parsing: try await console.send(.GET, "/", cookie: vera, headers: [("Accept", "application/json")]).body)
            let lines = overview["apple"]?.array?.compactMap { $0["text"]?.string } ?? []
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.contains("Apple's Server API, production transaction_info: 2 calls in the last second"), "\(lines)")
            #expect(lines.contains { $0.hasPrefix("Apple's Server API, sandbox order_lookup: 0 calls in the last second, held after Apple's 429 until ") })
        }
    }
}
