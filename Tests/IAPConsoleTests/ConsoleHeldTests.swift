import Foundation
import PipelineCore
import PipelineTestSupport
import RedisClient
import Testing

/// Held purchases with each rule's evidence beside them (the user's 24-hour window of the product,
/// the Apple Account's users in order, what it was paid in), and paged past the first 50.
@Suite(.serialized) struct ConsoleHeldTests {
    @Test func eachHoldShowsItsRulesEvidenceAndThePagesCoverEveryHoldOnce() async throws {
        try await ConsoleHarness.withConsole(environment: ["IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT": "1"]) { pipeline, console in
            // A daily cap of three: the fourth gem pack of the day is held.
            for index in 0..<4 {
                let ticket = try await pipeline.submit(receipt([.init(transactionID: "gem-held-\(index)", productID: "gems.small")]), user: "gem-player")
                _ = try await pipeline.terminal(ticket, orHeld: true)
            }
            // One Apple Account, one user allowed: bob, second on it, is held.
            let signer = pipeline.authority.signer
            let app = try signer.sign(payload: SignedFixture.appTransaction())
            for user in ["alice", "bob"] { _ = try await pipeline.terminal(try #require(try await pipeline.post(["signed_app_transaction": app, "user_id": user]).json["ticket"] as? String)) }
            var bought = SignedFixture.transaction("2000000000000961")
            bought.appTransactionID = SignedFixture.appleAccount
            #expect(try await pipeline.terminal(try await pipeline.submit(signed: try signer.sign(payload: bought), user: "bob"), orHeld: true).status == .held)
            // And 55 older holds, some held in the same millisecond, to page through.
            let keys = pipeline.store.keys
            for index in 0..<55 {
                let unit = "old-\(index)", at = String(1_795_000_000_000 + Int64(index / 2))
                _ = try await pipeline.redis.pipeline([
                    RedisCommand("HSET", keys.hold(unitInThisBucket: unit), "unit", unit, "status", "held", "reason", "currency_unknown",
                                 "user_id", "p-\(index)", "product_id", "gold.100", "quantity", "1", "held_at", at, "ticket", "t-\(index)",
                                 "original_transaction_id", unit, "transaction_id", unit),
                    RedisCommand("ZADD", keys.holds, at, unit),
                ])
            }

            let ada = try await console.signIn("ada")
            var units: [String] = []
            var page = try await console.send(.GET, "/held", cookie: ada)
            var pages = [page.body]
            while let next = page.body.range(of: #"/held\?after=[^"]+"#, options: .regularExpression).map({ String(page.body[$0]) }) {
                page = try await console.send(.GET, next.replacingOccurrences(of: "&amp;", with: "&"), cookie: ada)
                pages.append(page.body)
                #expect(pages.count < 5)
            }
            for body in pages {
                let pattern = try NSRegularExpression(pattern: #"action="/held/([^/"]+)/release""#)
                units += pattern.matches(in: body, range: NSRange(body.startIndex..., in: body)).map {
                    String(body[Range($0.range(at: 1), in: body)!]).removingPercentEncoding!
                }
            }
            #expect(pages.count == 2 && pages[0].contains("The oldest 50 held purchases"), "\(pages.count)")
            #expect(units.count == 57 && Set(units).count == 57, "each hold once: \(units.count), \(Set(units).count)")
            #expect(units.prefix(55) == (0..<55).map { "old-\($0)" }[...], "oldest first")

            let last = pages[1]
            #expect(last.contains("3 of gems.small granted to the user in the last 24 hours (the cap: 3 a day)"), "\(last)")
            #expect(last.contains("Apple Account \(SignedFixture.appleAccount): this user joined as number 2 of 2<br>1. alice<br>2. bob<br>"), "\(last)")
            #expect(pages[0].contains("the currency is unknown"))
            #expect(last.contains("href=\"/purchases/gem-held-3\""), "a hold links to its story")
        }
    }
}
