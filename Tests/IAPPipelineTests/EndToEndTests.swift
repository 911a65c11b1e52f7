import AppleSimulator
import Foundation
import PipelineCore
import IAPStages
import IAPOperations
import RedisClient
import PipelineTestSupport
import Testing

/// Receipts in over HTTP, through verify → dedupe → grant on a real Redis with apple-sim, to a
/// terminal ticket: every accepted receipt ends in one terminal state, nothing granted twice.
@Suite(.serialized) struct EndToEndTests {
    @Test func aValidReceiptIsGrantedOnceAndPublishedForFulfilment() async throws {
        try await withPipeline { pipeline in
            let ticket = try await pipeline.terminal(try await pipeline.submit(receipt([gold("1000")])))
            #expect(ticket.status == .granted)
            #expect(ticket.environment == "Production")
            #expect(ticket.attempts == 1)
            #expect(ticket.transactions.map(\.outcome) == [.granted])
            #expect(ticket.transactions.first?.productID == "gold.100")
            let fulfilments = try await pipeline.fulfilments()
            #expect(fulfilments.count == 1)
            #expect(fulfilments.first?["user_id"] == "player-1" && fulfilments.first?["transaction_id"] == "1000")
            let record = try await pipeline.redis.send("HGETALL", pipeline.configuration.keys.grant(unit: "1000")).stringDictionary
            #expect(record["ticket"] == ticket.ticket && record["environment"] == "Production")
            let stats = try await pipeline.store.stats(lease: .seconds(30))
            #expect(stats.inflight.values.allSatisfy { $0 == 0 } && stats.queues.values.allSatisfy { $0 == 0 })
        }
    }

    @Test func aSandboxReceiptIsVerifiedInSandbox() async throws {
        try await withPipeline { pipeline in
            let ticket = try await pipeline.terminal(try await pipeline.submit(receipt([gold("2000")], environment: "Sandbox")))
            #expect(ticket.status == .granted && ticket.environment == "Sandbox")
        }
    }

    @Test func aReceiptOfAnotherAppIsRejected() async throws {
        try await withPipeline { pipeline in
            let ticket = try await pipeline.terminal(try await pipeline.submit(receipt([gold("3000")], bundleID: "com.other.app")))
            #expect(ticket.status == .rejected && ticket.reason == "bundle_mismatch")
            #expect(try await pipeline.fulfilments().isEmpty)
        }
    }

    @Test func applesRejectionsAndEmptyReceiptsAreRejected() async throws {
        try await withPipeline { pipeline in
            let invalid = try await pipeline.terminal(try await pipeline.submit(receipt([gold("1")], status: 21003)))
            #expect(invalid.status == .rejected && invalid.reason == "apple_status_21003")
            let empty = try await pipeline.terminal(try await pipeline.submit(receipt([])))
            #expect(empty.status == .rejected && empty.reason == "no_purchases")
        }
    }

    @Test func transientFailuresAreRetriedUntilValid() async throws {
        try await withPipeline(maxAttempts: 5) { pipeline in
            let ticket = try await pipeline.terminal(try await pipeline.submit(receipt([gold("4000")], failures: 2)))
            #expect(ticket.status == .granted)
            #expect(ticket.attempts == 3)
        }
    }

    @Test func ourMisconfigurationDeadLettersInsteadOfRejecting() async throws {
        try await withPipeline { pipeline in
            let ticket = try await pipeline.terminal(try await pipeline.submit(receipt([gold("1")], status: 21004)))
            #expect(ticket.status == .dead && ticket.reason == "apple_status_21004")
            #expect(try await pipeline.length(pipeline.configuration.keys.dead) == 1)
        }
    }

    @Test func alwaysFailingGoesDeadThenAReplayGrantsExactlyOnce() async throws {
        try await withPipeline(maxAttempts: 3) { pipeline in
            // Apple fails more often than we try: the job dies, with its reason.
            let id = try await pipeline.submit(receipt([gold("5000")], failures: 3))
            let dead = try await pipeline.terminal(id)
            #expect(dead.status == .dead && dead.reason == "retries_exhausted" && dead.attempts == 3)
            let entries = try await pipeline.store.deadLetters(limit: 10)
            #expect(entries.count == 1)
            let letter = try DeadLetter.decode(entries[0])
            #expect(letter.ticket == id && letter.stage == "verify" && letter.error?.contains("apple_status_21005") == true)
            // Replayed (twice, concurrently): Apple has recovered, the purchase is granted once.
            async let first = pipeline.store.replay(entry: entries[0], ttl: .seconds(3600))
            async let second = pipeline.store.replay(entry: entries[0], ttl: .seconds(3600))
            let replays = try await [first, second]
            #expect(replays.filter { $0 }.count == 1)
            let granted = try await pipeline.terminal(id)
            #expect(granted.status == .granted)
            #expect(try await pipeline.fulfilments().count == 1)
            #expect(try await pipeline.length(pipeline.configuration.keys.dead) == 0)
        }
    }

    @Test func aResubmittedReceiptKeepsItsTicketAndGrantsOnce() async throws {
        try await withPipeline { pipeline in
            let sent = receipt([gold("6000")])
            let id = try await pipeline.submit(sent)
            #expect(try await pipeline.terminal(id).status == .granted)
            let again = try await pipeline.post(["receipt_data": sent.receiptData(), "user_id": "player-1"])
            #expect(again.status == 200)
            #expect(again.json["ticket"] as? String == id && again.json["status"] as? String == "granted")
            #expect(try await pipeline.fulfilments().count == 1)
        }
    }

    @Test func anotherReceiptWithAGrantedPurchaseIsADuplicate() async throws {
        try await withPipeline { pipeline in
            let first = try await pipeline.terminal(try await pipeline.submit(receipt([gold("7000")])))
            #expect(first.status == .granted)
            // The same purchase inside a different receipt (a replay attack, or a later receipt).
            var replayed = receipt([gold("7000")])
            replayed.nonce = "other receipt"
            let second = try await pipeline.terminal(try await pipeline.submit(replayed, user: "attacker"))
            #expect(second.status == .duplicate)
            #expect(second.transactions.map(\.outcome) == [.duplicate])
            #expect(try await pipeline.fulfilments().count == 1)
        }
    }

    @Test func aRestoredNonConsumableIsADuplicate() async throws {
        try await withPipeline { pipeline in
            let bought = receipt([.init(transactionID: "8000", productID: "level.pack")])
            #expect(try await pipeline.terminal(try await pipeline.submit(bought)).status == .granted)
            // A restore: a new transaction id, the same original one.
            let restored = receipt([.init(transactionID: "8001", originalTransactionID: "8000", productID: "level.pack")])
            let ticket = try await pipeline.terminal(try await pipeline.submit(restored))
            #expect(ticket.status == .duplicate)
            #expect(ticket.transactions.first?.originalTransactionID == "8000")
            #expect(try await pipeline.fulfilments().count == 1)
        }
    }

    @Test func theClientsClaimsAreCheckedAgainstTheReceipt() async throws {
        try await withPipeline { pipeline in
            let sent = receipt([gold("9000"), .init(transactionID: "9001", productID: "level.pack")])
            let notThere = try await pipeline.terminal(try await pipeline.submit(sent, transactionID: "1234"))
            #expect(notThere.status == .rejected && notThere.reason == "transaction_not_in_receipt")
            let wrongProduct = try await pipeline.terminal(try await pipeline.submit(sent, user: "u2", productID: "gems"))
            #expect(wrongProduct.status == .rejected && wrongProduct.reason == "product_mismatch")
            let named = try await pipeline.terminal(try await pipeline.submit(sent, user: "u3", transactionID: "9001"))
            #expect(named.status == .granted && named.transactions.map(\.transactionID) == ["9001"])
            #expect(try await pipeline.fulfilments().count == 1)
        }
    }

    @Test func refundedPurchasesAreRejectedAndUnknownProductsDeadLettered() async throws {
        try await withPipeline { pipeline in
            let refunded = try await pipeline.terminal(try await pipeline.submit(receipt([
                .init(transactionID: "10000", productID: "gold.100", cancellationDateMs: "1700000000000"),
            ])))
            #expect(refunded.status == .rejected && refunded.reason == "refunded")
            // A product missing from the catalog is our mistake: the whole job waits as a dead letter.
            let unknown = try await pipeline.terminal(try await pipeline.submit(receipt([.init(transactionID: "10001", productID: "mystery")])))
            #expect(unknown.status == .dead && unknown.reason == "unknown_product")
            let mixed = try await pipeline.terminal(try await pipeline.submit(receipt([
                .init(transactionID: "10002", productID: "mystery"), gold("10003"),
            ])))
            #expect(mixed.status == .dead && mixed.reason == "unknown_product")
            #expect(try await pipeline.fulfilments().isEmpty)
            let dead = try await pipeline.store.deadLetters(limit: 10).map(DeadLetter.decode)
            #expect(dead.count == 2 && dead.allSatisfy { $0.reason == "unknown_product" && $0.stage == "dedupe" })
            #expect(try await pipeline.redis.send("EXISTS", pipeline.configuration.keys.claim(unit: "10003")) == .integer(0))
        }
    }

    @Test func subscriptionPeriodsAreGrantedPerPeriod() async throws {
        try await withPipeline { pipeline in
            let period = SimulatedReceipt.Transaction(transactionID: "11000", productID: "vip.monthly", webOrderLineItemID: "555")
            let first = try await pipeline.terminal(try await pipeline.submit(receipt([period])))
            #expect(first.status == .granted)
            let claim = try await pipeline.redis.send("GET", pipeline.configuration.keys.claim(unit: "wol:555"))
            #expect(claim.string == first.ticket)
            let renewal = SimulatedReceipt.Transaction(transactionID: "11001", originalTransactionID: "11000", productID: "vip.monthly", webOrderLineItemID: "556")
            let renewed = try await pipeline.terminal(try await pipeline.submit(receipt([period, renewal])))
            #expect(renewed.status == .granted)
            #expect(renewed.transactions.map(\.outcome) == [.duplicate, .granted])
            // One grant per period: the first `granted`, the next `renewed` (the rest is entitlement news).
            let grants = try await pipeline.fulfilments().filter { $0["event"] == "granted" || $0["event"] == "renewed" }
            #expect(grants.map { "\($0["event"]!) \($0["unit"]!)" } == ["granted wol:555", "renewed wol:556"])
        }
    }

    @Test func aBacklogWaitsInTheQueueAndDrainsWhenAVerifierStarts() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            pipeline.start(.dedupe)
            pipeline.start(.grant)
            var tickets: [String] = []
            for index in 0..<20 { tickets.append(try await pipeline.submit(receipt([gold("12\(index)")]))) }
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 20)
            pipeline.start(.verify)
            for ticket in tickets { #expect(try await pipeline.terminal(ticket).status == .granted) }
            #expect(try await pipeline.length(pipeline.configuration.keys.queue(.verify)) == 0)
            #expect(try await pipeline.fulfilments().count == 20)
        }
    }

    @Test func poisonOnEveryQueueIsDeadLetteredAndWorkersKeepRunning() async throws {
        // Every stage runs, the webhook's too (its deliveries fail: nothing listens there, and they wait to be retried).
        let webhook = ["IAP_WEBHOOK_URL": "http://127.0.0.1:9/hook", "IAP_WEBHOOK_SECRET": "0123456789abcdef0123"]
        try await withPipeline(environment: webhook) { pipeline in
            let keys = pipeline.configuration.keys
            for stage in Stage.allCases { try await pipeline.redis.send("LPUSH", keys.queue(stage), "\u{1}garbage{") }
            // A job that is fine goes through after the garbage: the workers survived it.
            #expect(try await pipeline.terminal(try await pipeline.submit(receipt([gold("13000")]))).status == .granted)
            var reasons: [String] = []
            for entry in try await pipeline.store.deadLetters(limit: 10) { reasons.append(try DeadLetter.decode(entry).reason) }
            // One garbage entry per stage queue, the notify and webhook queues included.
            #expect(reasons == Array(repeating: "undecodable_job", count: Stage.allCases.count))
        }
    }

    @Test func aJobWhoseTicketVanishedIsDeadLettered() async throws {
        try await withPipeline(startWorkers: false) { pipeline in
            let id = try await pipeline.submit(receipt([gold("14000")]))
            try await pipeline.redis.send("DEL", pipeline.configuration.keys.ticket(id))
            pipeline.start(.verify)
            // No ticket to wake us: wait for the dead letter itself with a blocking read on the dead list.
            let blocking = pipeline.redis.makeDedicatedConnection()
            let dead = try await blocking.execute(
                RedisCommand("BLMOVE", pipeline.configuration.keys.dead, "seen", "RIGHT", "LEFT", "10"), blocking: .milliseconds(10_000))
            await blocking.close()
            let letter = try DeadLetter.decode(try #require(dead.string))
            #expect(letter.reason == "ticket_missing" && letter.ticket == id)
        }
    }
}
