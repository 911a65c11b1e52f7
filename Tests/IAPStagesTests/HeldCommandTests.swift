import ArgumentParser
import PipelineCore
import IAPOperations
import RedisClient
import TestSupport
import Testing

@testable import IAPControlCLI

/// `iapctl held release|reject` with what an operator has in hand: a unit, or the ticket from the
/// player's complaint; an id that matches nothing is an error, never "unchanged" and exit 0.
@Suite struct HeldCommandTests {
    @Test func aTicketDecidesEveryPurchaseItHoldsAndAnIdMatchingNothingExitsNonZero() async throws {
        try await withClusterNode { redis, server in
            let store = PipelineStore(redis: redis, keys: PurchasePolicyTests.keys)
            try await redis.send("SET", PurchasePolicyTests.keys.refunds(user: "u1"), "5")
            #expect(try await PurchasePolicyTests.grantNew(store, ticket: "T-held", transaction: "h1", refundLimit: 1) == .held)
            #expect(try await store.heldUnits(matching: "T-held") == ["h1"])
            #expect(try await store.heldUnits(matching: "h1") == ["h1"])
            #expect(try await store.heldUnits(matching: "T-nothing").isEmpty)

            // By its ticket: released once, the ticket granted.
            let release = try HeldCommand.Release.parse(["--redis-url", server.url, "--prefix", PurchasePolicyTests.keys.prefix, "--by", "oncall", "T-held"])
            try await release.run()
            #expect(try await store.hold(unit: "h1")?.status == "released")
            #expect(try await store.ticket("T-held")?.status == .granted)

            // An id that is neither a held unit nor a ticket holding one: exit code 1.
            let wrong = try HeldCommand.Reject.parse(["--redis-url", server.url, "--prefix", PurchasePolicyTests.keys.prefix, "T-typo"])
            await #expect(throws: ExitCode.failure) { try await wrong.run() }
            // Deciding again by unit says what was decided; it is not an error.
            let again = try HeldCommand.Reject.parse(["--redis-url", server.url, "--prefix", PurchasePolicyTests.keys.prefix, "h1"])
            try await again.run()
            #expect(try await store.hold(unit: "h1")?.status == "released")
        }
    }
}
