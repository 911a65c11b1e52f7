import AppleJWS
import AppleSimulator
import Foundation
import PipelineCore
import IAPOperations
import RedisClient
import PipelineTestSupport
import Testing

/// The purchase policy through the whole pipeline: receipts in over HTTP, held by the rules an
/// operator configured, released or rejected once.
@Suite(.serialized) struct PolicyEndToEndTests {
    /// The seeds' burst of small purchases: 20 receipts of a product capped at 3 a day, sent at
    /// once, through workers that handle 8 jobs at a time. Exactly 3 are granted; the 17 held
    /// ones are each granted once when released, and only once however often they are released.
    @Test func twentyParallelPurchasesAgainstACapOfThreeGrantExactlyThree() async throws {
        try await withPipeline { pipeline in
            let tickets = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await pipeline.submit(receipt([.init(transactionID: "gem-\(index)", productID: "gems.small")]))
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            var settled: [Ticket] = []
            for ticket in tickets { settled.append(try await pipeline.terminal(ticket, orHeld: true)) }
            #expect(settled.filter { $0.status == .granted }.count == 3)
            #expect(settled.filter { $0.status == .held }.count == 17)
            #expect(settled.filter { $0.status == .held }.allSatisfy { $0.transactions.first?.reason == "daily_limit_exceeded" })
            let held = try await pipeline.store.heldPurchases(limit: 100)
            #expect(held.count == 17)

            for purchase in held {
                #expect(try await pipeline.store.releaseHeld(unit: purchase.unit, by: "test") == .decided("released"))
                #expect(try await pipeline.store.releaseHeld(unit: purchase.unit, by: "test") == .alreadyDecided("released"))
            }
            for ticket in tickets { #expect(try await pipeline.store.ticket(ticket)?.status == .granted) }
            let events = try await pipeline.fulfilments().map { $0["event"] ?? "" }
            #expect(events.filter { $0 == "granted" }.count == 3)
            #expect(events.filter { $0 == "held" }.count == 17)
            #expect(events.filter { $0 == "released" }.count == 17)
            let units = Set(try await pipeline.fulfilments().filter { $0["event"] != "held" }.compactMap { $0["unit"] })
            #expect(units.count == 20)
            #expect(try await pipeline.store.stats(lease: .seconds(30)).held == 0)
        }
    }

    /// `IAP_CURRENCIES=USD`: Apple's signed currency decides; a legacy receipt's currency is the
    /// client's word; none at all is held as unknown.
    @Test func theCurrencyRuleTrustsApplesSignatureOverTheClient() async throws {
        try await withPipeline(environment: ["IAP_CURRENCIES": "USD"]) { pipeline in
            func legacy(_ id: String, currency: String?) async throws -> Ticket {
                var body: [String: Any] = ["receipt_data": receipt([gold(id)]).receiptData(), "user_id": "player-1"]
                if let currency { body["currency"] = currency }
                let reply = try await pipeline.post(body)
                #expect(reply.status == 202)
                return try await pipeline.terminal(try #require(reply.json["ticket"] as? String), orHeld: true)
            }
            func signed(_ id: String, signedCurrency: String, clientCurrency: String) async throws -> Ticket {
                var transaction = JWSTransaction(
                    transactionID: id, bundleID: PipelineHarness.bundleID, productID: "gold.100", purchaseDate: 1_700_000_000_000)
                transaction.currency = signedCurrency
                let jws = try pipeline.authority.signer.sign(payload: transaction)
                let reply = try await pipeline.post(["signed_transaction": jws, "user_id": "player-1", "currency": clientCurrency])
                #expect(reply.status == 202)
                return try await pipeline.terminal(try #require(reply.json["ticket"] as? String), orHeld: true)
            }
            #expect(try await legacy("c1", currency: "USD").status == .granted)
            let rub = try await legacy("c2", currency: "RUB")
            #expect(rub.status == .held && rub.transactions.first?.reason == "currency_not_allowed")
            let unknown = try await legacy("c3", currency: nil)
            #expect(unknown.status == .held && unknown.transactions.first?.reason == "currency_unknown")
            #expect(try await signed("2000000000000101", signedCurrency: "USD", clientCurrency: "RUB").status == .granted)
            let lied = try await signed("2000000000000102", signedCurrency: "RUB", clientCurrency: "USD")
            #expect(lied.status == .held && lied.transactions.first?.reason == "currency_not_allowed")
            #expect(try await pipeline.store.hold(unit: "2000000000000102")?.currency == "RUB")

            #expect(try await pipeline.store.rejectHeld(unit: "c2", by: "test") == .decided("rejected"))
            let rejected = try #require(try await pipeline.store.ticket(rub.ticket))
            #expect(rejected.status == .rejected && rejected.reason == "currency_not_allowed")
        }
    }

    /// `IAP_SANDBOX=deny`: a sandbox receipt in production is rejected, nothing held or claimed.
    @Test func sandboxPurchasesAreRejectedWhenTheSandboxIsDenied() async throws {
        try await withPipeline(environment: ["IAP_SANDBOX": "deny"]) { pipeline in
            let ticket = try await pipeline.terminal(try await pipeline.submit(receipt([gold("s1")], environment: "Sandbox")))
            #expect(ticket.status == .rejected && ticket.reason == "sandbox_not_allowed")
            #expect(try await pipeline.redis.send("EXISTS", pipeline.configuration.keys.claim(unit: "s1")).int == 0)
            #expect(try await pipeline.terminal(try await pipeline.submit(receipt([gold("p1")]))).status == .granted)
        }
    }
}
