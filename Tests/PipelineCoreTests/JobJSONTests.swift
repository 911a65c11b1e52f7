import AppleJWS
import AppleReceipt
import Foundation
@testable import PipelineCore
import PlainJSON
import Testing

/// A job's JSON: an envelope and one typed piece of work, on the wire as the same flat object as
/// before the work was typed. Jobs already queued by the previous version are read (a rolling
/// upgrade), and what this one writes is what the previous wrote, less members no stage read.
@Suite struct JobJSONTests {
    static let receipt: VerifiedReceipt = {
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
        return VerifiedReceipt(
            environment: "Sandbox", bundleID: "com.example",
            transactions: [refunded, InAppTransaction(transactionID: "7", originalTransactionID: "5", productID: "gem")])
    }()

    /// One job of each kind, in the order of `previousVersion`'s texts.
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
        dedupe.work = .dedupe(Job.Verified(receipt: receipt, productID: "gold"))
        var grant = dedupe
        grant.stage = .grant
        grant.work = .grant(Job.Claimed(purchases: [
            Purchase(transactionID: "7", originalTransactionID: "5", productID: "gem", quantity: 1, unit: "5:gem", outcome: .pending),
            Purchase(
                transactionID: "1000000000000001", originalTransactionID: "1000000000000001", productID: "gold", quantity: 2,
                unit: nil, outcome: .rejected, reason: "refunded"),
        ], receipt: receipt))
        var empty = grant
        empty.work = .grant(Job.Claimed(purchases: [], receipt: receipt))
        var part = grant
        part.ticket = "2.T1"
        part.part = "3.2.T1"
        var prorated = JWSTransaction(transactionID: "7", bundleID: "b", productID: "gold", revocationReason: 1)
        prorated.revocationType = "REFUND_PRORATED"
        prorated.revocationPercentage = 33333
        prorated.offerType = 1
        let notification = VerifiedNotification(
            NotificationPayload(notificationType: "REFUND", notificationUUID: "U-1", signedDate: 5, data: nil),
            transaction: prorated, renewal: nil)
        let notify = Job(ticket: "N1", stage: .notify, userID: "", work: .notification(notification), enqueuedAt: 1000)
        return [fresh, signed, dedupe, grant, empty, part, notify]
    }

    /// What the previous version (before the work was typed) wrote for `jobs()`, byte for byte.
    static let previousVersion: [String] = [
            #"{"attempts":0,"enqueued_at":1700000000123,"product_id":"gold","receipt_data":"MIIT+/base64==","stage":"verify","ticket":"T1","user_id":"u/1 \"é\""}"#,
            #"{"attempts":3,"enqueued_at":5,"signed_transaction":"eyJ.a.b","source":"notification","stage":"verify","ticket":"T2","transaction_id":"99","user_id":"u2"}"#,
            #"{"attempts":0,"enqueued_at":1700000000123,"product_id":"gold","receipt":{"bundle_id":"com.example","environment":"Sandbox","transactions":[{"app_account_token":"A1B2","cancellation_date_ms":"1700000000000","currency":"EUR","offer_discount_type":"PAY_AS_YOU_GO","offer_identifier":"CODE-1","offer_period":"P1M","offer_type":"3","original_transaction_id":"1000000000000001","price":"1990","product_id":"gold","purchase_date_ms":"1699999999000","quantity":"2","transaction_id":"1000000000000001","web_order_line_item_id":"w1"},{"original_transaction_id":"5","product_id":"gem","quantity":"1","transaction_id":"7"}]},"stage":"dedupe","ticket":"T1","user_id":"u/1 \"é\""}"#,
            #"{"attempts":0,"enqueued_at":1700000000123,"product_id":"gold","purchases":[{"original_transaction_id":"5","outcome":"pending","product_id":"gem","quantity":1,"transaction_id":"7","unit":"5:gem"},{"original_transaction_id":"1000000000000001","outcome":"rejected","product_id":"gold","quantity":2,"reason":"refunded","transaction_id":"1000000000000001"}],"receipt":{"bundle_id":"com.example","environment":"Sandbox","transactions":[{"app_account_token":"A1B2","cancellation_date_ms":"1700000000000","currency":"EUR","offer_discount_type":"PAY_AS_YOU_GO","offer_identifier":"CODE-1","offer_period":"P1M","offer_type":"3","original_transaction_id":"1000000000000001","price":"1990","product_id":"gold","purchase_date_ms":"1699999999000","quantity":"2","transaction_id":"1000000000000001","web_order_line_item_id":"w1"},{"original_transaction_id":"5","product_id":"gem","quantity":"1","transaction_id":"7"}]},"stage":"grant","ticket":"T1","user_id":"u/1 \"é\""}"#,
            #"{"attempts":0,"enqueued_at":1700000000123,"product_id":"gold","purchases":[],"receipt":{"bundle_id":"com.example","environment":"Sandbox","transactions":[{"app_account_token":"A1B2","cancellation_date_ms":"1700000000000","currency":"EUR","offer_discount_type":"PAY_AS_YOU_GO","offer_identifier":"CODE-1","offer_period":"P1M","offer_type":"3","original_transaction_id":"1000000000000001","price":"1990","product_id":"gold","purchase_date_ms":"1699999999000","quantity":"2","transaction_id":"1000000000000001","web_order_line_item_id":"w1"},{"original_transaction_id":"5","product_id":"gem","quantity":"1","transaction_id":"7"}]},"stage":"grant","ticket":"T1","user_id":"u/1 \"é\""}"#,
            #"{"attempts":0,"enqueued_at":1700000000123,"part":"3.2.T1","product_id":"gold","purchases":[{"original_transaction_id":"5","outcome":"pending","product_id":"gem","quantity":1,"transaction_id":"7","unit":"5:gem"},{"original_transaction_id":"1000000000000001","outcome":"rejected","product_id":"gold","quantity":2,"reason":"refunded","transaction_id":"1000000000000001"}],"receipt":{"bundle_id":"com.example","environment":"Sandbox","transactions":[{"app_account_token":"A1B2","cancellation_date_ms":"1700000000000","currency":"EUR","offer_discount_type":"PAY_AS_YOU_GO","offer_identifier":"CODE-1","offer_period":"P1M","offer_type":"3","original_transaction_id":"1000000000000001","price":"1990","product_id":"gold","purchase_date_ms":"1699999999000","quantity":"2","transaction_id":"1000000000000001","web_order_line_item_id":"w1"},{"original_transaction_id":"5","product_id":"gem","quantity":"1","transaction_id":"7"}]},"stage":"grant","ticket":"2.T1","user_id":"u/1 \"é\""}"#,
            #"{"attempts":0,"enqueued_at":1000,"notification":{"signed_date":5,"transaction":{"bundleId":"b","environment":"Production","offerType":1,"originalTransactionId":"7","productId":"gold","quantity":1,"revocationPercentage":33333,"revocationReason":1,"revocationType":"REFUND_PRORATED","transactionId":"7"},"type":"REFUND","uuid":"U-1"},"stage":"notify","ticket":"N1","user_id":""}"#,
    ]

    /// Jobs the previous version and the scripts write that `jobs()` has no kind of: an operator's
    /// sync, a re-check (`promote_due_rechecks`, with cjson), a webhook delivery
    /// (`route_fulfilment_events`) and a replayed one, the two errands to Apple, a dry run.
    static let writtenElsewhere: [(text: String, job: Job)] = {
        var sync = Job(
            ticket: "S1", stage: .verify, userID: "erin", work: .verify(Job.ToVerify(evidence: .accountSync("705", environment: "Sandbox"))),
            source: Job.syncSource, enqueuedAt: 9)
        sync.bundleID = "com.example"
        let recheck = Job(
            ticket: "recheck-5-9-1", stage: .verify, userID: "u",
            work: .verify(Job.ToVerify(evidence: .recheck(RecheckRequest(
                originalTransactionID: "5", environment: "Production", latestTransactionID: "8", expiresAt: 1700, historyRevision: "hr:3")))),
            source: "recheck", enqueuedAt: 9)
        let delivery = Job(ticket: "webhook-u", stage: .webhook, userID: "u", work: .delivery(event: nil), enqueuedAt: 9)
        let replay = Job(ticket: "webhook-event-1", stage: .webhook, userID: "u", work: .delivery(event: #"{"id":"1"}"#), enqueuedAt: 9)
        let toAnalytics = Job(ticket: "webhook@analytics:u", stage: .webhook, userID: "u", work: .delivery(event: nil, destination: "analytics"), enqueuedAt: 9)
        let token = AppAccountTokenRequest(originalTransactionID: "5", appAccountToken: "a1", environment: "Sandbox")
            .job(ticket: "token-5", user: "u", now: 9)
        let finish = FinishTransactionRequest(transactionID: "7", environment: "Production", bundleID: "b").job(ticket: "finish-7", user: "u", now: 9)
        let dryRun = Job(
            ticket: "D1", stage: .dedupe, userID: "u", work: .dedupe(Job.Verified(receipt: nil, appleAccount: "705", dryRun: true)),
            source: Job.syncSource, enqueuedAt: 9)
        return [
            (#"{"apple_account":"705","attempts":0,"bundle_id":"com.example","enqueued_at":9,"source":"sync","stage":"verify","sync_environment":"Sandbox","ticket":"S1","user_id":"erin"}"#, sync),
            (#"{"ticket":"recheck-5-9-1","stage":"verify","user_id":"u","source":"recheck","recheck":{"original_transaction_id":"5","environment":"Production","latest_transaction_id":"8","expires_at":"1700","history_revision":"hr:3"},"attempts":0,"enqueued_at":9}"#, recheck),
            (#"{"ticket":"webhook-u","stage":"webhook","user_id":"u","attempts":0,"enqueued_at":9}"#, delivery),
            (#"{"attempts":0,"enqueued_at":9,"stage":"webhook","ticket":"webhook-event-1","user_id":"u","webhook_event":"{\"id\":\"1\"}"}"#, replay),
            // As route_fulfilment_events writes it for a destination other than the default.
            (#"{"ticket":"webhook@analytics:u","stage":"webhook","user_id":"u","attempts":0,"enqueued_at":9,"destination":"analytics"}"#, toAnalytics),
            (#"{"attempts":0,"enqueued_at":9,"set_app_account_token":{"app_account_token":"a1","environment":"Sandbox","original_transaction_id":"5"},"source":"app_account_token","stage":"notify","ticket":"token-5","user_id":"u"}"#, token),
            (#"{"attempts":0,"enqueued_at":9,"finish_transaction":{"bundle_id":"b","environment":"Production","transaction_id":"7"},"source":"finish_transaction","stage":"notify","ticket":"finish-7","user_id":"u"}"#, finish),
            (#"{"apple_account":"705","attempts":0,"dry_run":true,"enqueued_at":9,"source":"sync","stage":"dedupe","ticket":"D1","user_id":"u"}"#, dryRun),
        ]
    }()

    @Test func roundTrips() throws {
        for job in Self.jobs() + Self.writtenElsewhere.map(\.job) {
            #expect(try Job.decode(job.encoded()) == job)
        }
    }

    /// A rolling upgrade: every job the previous version queued is read as the same job.
    @Test func readsWhatThePreviousVersionWrote() throws {
        for (text, job) in zip(Self.previousVersion, Self.jobs()) + Self.writtenElsewhere {
            #expect(try Job.decode(text) == job, "\(text)")
        }
    }

    /// ... and the previous version reads what this one writes: the same members with the same
    /// values, the same bytes but for a grant job, which no longer carries the client's word on
    /// what it bought (dedupe applied it; no grant read it), nor the receipt: each purchase carries
    /// its own transaction, and the job the answer's environment and app.
    @Test func writesWhatThePreviousVersionWroteLessWhatNoStageRead() throws {
        for (text, job) in zip(Self.previousVersion, Self.jobs()) {
            guard case .object(let before) = try JSONValue(parsing: Array(text.utf8)), case .object(let now) = job.json else {
                Issue.record("not an object: \(text)")
                continue
            }
            guard job.stage == .grant else {
                #expect(job.encoded() == text)
                continue
            }
            #expect(Set(before.keys).subtracting(now.keys) == ["product_id", "receipt"], "\(job.encoded())")
            #expect(Set(now.keys).subtracting(before.keys) == ["environment", "app_bundle_id"], "\(job.encoded())")
            #expect(now.allSatisfy { $0.key == "purchases" || before[$0.key] == nil || before[$0.key] == $0.value })
            #expect(now["environment"] == .string("Sandbox") && now["app_bundle_id"] == .string("com.example"))
        }
    }

    /// A grant job, byte for byte: each purchase with the receipt's transaction of its id, and
    /// nothing of the receipt beyond its purchases' transactions.
    @Test func aGrantJobCarriesEachPurchasesTransactionNotTheReceipt() throws {
        var job = Self.jobs()[3]
        var claimed = try #require(job.claimed)
        claimed.purchases.removeLast()
        job.work = .grant(claimed)
        let text = #"{"app_bundle_id":"com.example","attempts":0,"enqueued_at":1700000000123,"environment":"Sandbox","purchases":[{"original_transaction_id":"5","outcome":"pending","product_id":"gem","quantity":1,"transaction":{"original_transaction_id":"5","product_id":"gem","quantity":"1","transaction_id":"7"},"transaction_id":"7","unit":"5:gem"}],"stage":"grant","ticket":"T1","user_id":"u/1 \"é\""}"#
        #expect(job.encoded() == text)
        #expect(try Job.decode(text) == job)
        #expect(claimed.narrowedReceipt?.transactions.map(\.transactionID) == ["7"])
    }

    /// A re-check's answer: the renewal rides with its latest period (the last listed of its
    /// subscription), whichever purchases the job grants.
    @Test func aGrantJobCarriesTheRenewalWithItsLatestPeriod() throws {
        var receipt = Self.receipt
        receipt.transactions.append(InAppTransaction(transactionID: "8", originalTransactionID: "5", productID: "gem"))
        receipt.renewal = SubscriptionRenewal(originalTransactionID: "5", status: "active", autoRenew: 1, graceExpiresAt: nil, signedAt: 9)
        let claimed = Job.Claimed(purchases: [], receipt: receipt)
        #expect(claimed.renewal == receipt.renewal)
        #expect(claimed.renewalPeriod?.transactionID == "8")
        var job = Self.jobs()[4]
        job.work = .grant(claimed)
        #expect(try Job.decode(job.encoded()) == job)
        guard case .object(var old) = try JSONValue(parsing: Array(Self.previousVersion[4].utf8)) else {
            Issue.record("not an object")
            return
        }
        old["receipt"] = receipt.json
        #expect(try Job.decode(JSONValue.object(old).canonicalText) == job)
    }

    @Test func readsNumbersAppleSentAsNumbers() throws {
        let text = #"""
            {"attempts":0,"enqueued_at":1,"stage":"dedupe","ticket":"T","user_id":"u",
             "receipt":{"bundle_id":"b","environment":"Production","transactions":[
               {"transaction_id":1000000000000002,"product_id":"gold","quantity":3}]}}
            """#
        let receipt = try #require(try Job.decode(text).verified?.receipt)
        #expect(receipt.transactions.first?.transactionID == "1000000000000002")
        #expect(receipt.transactions.first?.originalTransactionID == "1000000000000002")
        #expect(receipt.transactions.first?.quantity == 3)
    }

    /// Not a job, or a job without the work its stage needs (the runtime dead-letters it, `undecodable_job`).
    @Test(arguments: [
        #"{"attempts":0,"enqueued_at":1,"stage":"ship","ticket":"T","user_id":"u"}"#,
        #"{"attempts":0,"enqueued_at":1,"stage":"verify","user_id":"u"}"#,
        #"{"attempts":"0","enqueued_at":1,"stage":"verify","ticket":"T","user_id":"u"}"#,
        #"{"attempts":0,"enqueued_at":1,"stage":"grant","ticket":"T","user_id":"u","purchases":[{"outcome":"maybe"}]}"#,
        #"{"attempts":0,"enqueued_at":1,"stage":"notify","ticket":"T","user_id":"u","notification":{"type":1}}"#,
        #"{"attempts":0,"enqueued_at":1,"stage":"verify","ticket":"T","user_id":"u","product_id":"gold"}"#,
        #"{"attempts":0,"enqueued_at":1,"stage":"grant","ticket":"T","user_id":"u","receipt":{"bundle_id":"b","environment":"Production","transactions":[]}}"#,
        #"{"attempts":0,"enqueued_at":1,"stage":"notify","ticket":"T","user_id":"u"}"#,
        #"["not a job"]"#,
        "not json",
    ])
    func refusesWhatIsNotAJob(_ text: String) {
        #expect(throws: (any Error).self) { try Job.decode(text) }
    }
}
