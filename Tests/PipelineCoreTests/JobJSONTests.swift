import AppleJWS
import AppleReceipt
import Foundation
import PipelineCore
import PlainJSON
import Testing

/// A job's hand-written JSON against `Job`'s `Codable` form: jobs already queued by an older
/// version decode, and an older worker reads what this one writes (a rolling upgrade).
@Suite struct JobJSONTests {
    static func jobs() -> [Job] {
        let fresh = Job(
            ticket: "T1", userID: "u/1 \"é\"", receiptData: "MIIT+/base64==", productID: "gold", transactionID: nil,
            enqueuedAt: 1_700_000_000_123)
        var signed = Job(
            ticket: "T2", userID: "u2", receiptData: nil, signedTransaction: "eyJ.a.b", productID: nil, transactionID: "99",
            enqueuedAt: 5)
        signed.attempts = 3
        signed.source = "notification"
        var dedupe = fresh
        dedupe.stage = .dedupe
        dedupe.receiptData = nil
        var refunded = InAppTransaction(
            transactionID: "1000000000000001", productID: "gold", quantity: 2, webOrderLineItemID: "w1",
            purchaseDateMs: "1699999999000", cancellationDateMs: "1700000000000")
        refunded.appAccountToken = "A1B2"
        refunded.price = "1990"
        refunded.currency = "EUR"
        refunded.offerType = "3"
        refunded.offerIdentifier = "CODE-1"
        refunded.offerDiscountType = "PAY_AS_YOU_GO"
        refunded.offerPeriod = "P1M"
        dedupe.receipt = VerifiedReceipt(
            environment: "Sandbox", bundleID: "com.example",
            transactions: [refunded, InAppTransaction(transactionID: "7", originalTransactionID: "5", productID: "gem")])
        var grant = dedupe
        grant.stage = .grant
        grant.purchases = [
            Purchase(transactionID: "7", originalTransactionID: "5", productID: "gem", quantity: 1, unit: "5:gem", outcome: .pending),
            Purchase(
                transactionID: "1000000000000001", originalTransactionID: "1000000000000001", productID: "gold", quantity: 2,
                unit: nil, outcome: .rejected, reason: "refunded"),
        ]
        var empty = grant
        empty.purchases = []
        var part = grant
        part.ticket = "2.T1"
        part.part = "3.2.T1"
        var notify = Job(ticket: "N1", userID: "", receiptData: nil, productID: nil, transactionID: nil, enqueuedAt: 1000)
        notify.stage = .notify
        var prorated = JWSTransaction(transactionID: "7", bundleID: "b", productID: "gold", revocationReason: 1)
        prorated.revocationType = "REFUND_PRORATED"
        prorated.revocationPercentage = 33333
        prorated.offerType = 1
        notify.notification = VerifiedNotification(
            NotificationPayload(notificationType: "REFUND", notificationUUID: "U-1", signedDate: 5, data: nil),
            transaction: prorated, renewal: nil)
        return [fresh, signed, dedupe, grant, empty, part, notify]
    }

    @Test func roundTrips() throws {
        for job in Self.jobs() {
            #expect(try Job.decode(job.encoded()) == job)
        }
    }

    @Test func readsWhatFoundationWroteAndFoundationReadsWhatItWrites() throws {
        for job in Self.jobs() {
            let foundation = String(decoding: canonicalJSON(job), as: UTF8.self)
            #expect(try Job.decode(foundation) == job)
            #expect(try JSONDecoder().decode(Job.self, from: Data(job.encoded().utf8)) == job)
        }
    }

    /// The same job has the same bytes whichever codec wrote it: a job queued before the
    /// upgrade and forwarded after it is still the same member of an in-flight list.
    @Test func writesTheSameBytesAsFoundation() {
        for job in Self.jobs() where job.notification == nil {
            #expect(job.encoded() == String(decoding: canonicalJSON(job), as: UTF8.self))
        }
    }

    @Test func readsNumbersAppleSentAsNumbers() throws {
        let text = #"""
            {"attempts":0,"enqueued_at":1,"stage":"grant","ticket":"T","user_id":"u",
             "receipt":{"bundle_id":"b","environment":"Production","transactions":[
               {"transaction_id":1000000000000002,"product_id":"gold","quantity":3}]}}
            """#
        let job = try Job.decode(text)
        #expect(job.receipt?.transactions.first?.transactionID == "1000000000000002")
        #expect(job.receipt?.transactions.first?.originalTransactionID == "1000000000000002")
        #expect(job.receipt?.transactions.first?.quantity == 3)
    }

    @Test(arguments: [
        #"{"attempts":0,"enqueued_at":1,"stage":"ship","ticket":"T","user_id":"u"}"#,
        #"{"attempts":0,"enqueued_at":1,"stage":"verify","user_id":"u"}"#,
        #"{"attempts":"0","enqueued_at":1,"stage":"verify","ticket":"T","user_id":"u"}"#,
        #"{"attempts":0,"enqueued_at":1,"stage":"grant","ticket":"T","user_id":"u","purchases":[{"outcome":"maybe"}]}"#,
        #"{"attempts":0,"enqueued_at":1,"stage":"notify","ticket":"T","user_id":"u","notification":{"type":1}}"#,
        #"["not a job"]"#,
        "not json",
    ])
    func refusesWhatIsNotAJob(_ text: String) {
        #expect(throws: (any Error).self) { try Job.decode(text) }
    }
}
