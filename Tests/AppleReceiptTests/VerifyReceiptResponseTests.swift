import AppleReceipt
import Foundation
import PlainJSON
import Testing

@Suite struct VerifyReceiptResponseTests {
    /// Apple's real production answer from ../shared/fixtures (verifyReceipt-production-status0.json).
    static let production = """
        {"status":0,"environment":"Production","receipt":{"download_id":75017873837267,"adam_id":1149703708,
        "request_date":"2017-01-13 06:57:20 Etc/GMT","app_item_id":1149703708,"version_external_identifier":820252187,
        "in_app":[{"is_trial_period":"false","purchase_date_pst":"2017-01-12 21:04:52 America/Los_Angeles",
        "product_id":"com.lucky917.live.gold.1.555","original_transaction_id":"350000191094279",
        "original_purchase_date_ms":"1484283892000","purchase_date_ms":"1484283892000",
        "transaction_id":"350000191094279","quantity":"1"}],
        "bundle_id":"com.lucky917.ios.Live","application_version":"32","receipt_type":"Production"}}
        """

    @Test func decodesApplesRealAnswer() throws {
        let answer = try VerifyReceiptResponse(parsing: Self.production)
        #expect(answer.status == 0)
        #expect(answer.environment == "Production")
        #expect(answer.receipt?.bundleID == "com.lucky917.ios.Live")
        var expected = InAppTransaction(
            transactionID: "350000191094279", originalTransactionID: "350000191094279",
            productID: "com.lucky917.live.gold.1.555", quantity: 1, purchaseDateMs: "1484283892000")
        // When it was first bought: what a restore's new transaction keeps (issue 54's cutover reads it).
        expected.originalPurchaseDateMs = "1484283892000"
        #expect(answer.transactions == [expected])
    }

    @Test func acceptsIdsAsNumbersAndMergesLatestReceiptInfo() throws {
        let json = """
            {"status": 0, "receipt": {"bundle_id": "b", "in_app": [
              {"transaction_id": 1000000123, "original_transaction_id": 1000000100, "product_id": "p", "quantity": 2}]},
             "latest_receipt_info": [
              {"transaction_id": "1000000123", "product_id": "p"},
              {"transaction_id": "1000000200", "product_id": "s", "web_order_line_item_id": 77,
               "cancellation_date_ms": "1600000000000"}]}
            """
        let answer = try VerifyReceiptResponse(parsing: json)
        #expect(answer.transactions.map(\.transactionID) == ["1000000123", "1000000200"])
        #expect(answer.transactions[0].originalTransactionID == "1000000100")
        #expect(answer.transactions[0].quantity == 2)
        #expect(answer.transactions[1].webOrderLineItemID == "77")
        #expect(answer.transactions[1].isRefunded)
        #expect(!answer.transactions[0].isRefunded)
    }

    @Test func readsIsRetryableAsBoolOrNumber() throws {
        let asBool = try VerifyReceiptResponse(parsing: #"{"status":21100,"is-retryable":true}"#)
        let asNumber = try VerifyReceiptResponse(parsing: #"{"status":21101,"is-retryable":1}"#)
        let absent = try VerifyReceiptResponse(parsing: #"{"status":21102}"#)
        #expect(asBool.isRetryable && asNumber.isRetryable && !absent.isRetryable)
    }

    @Test func anAnswerWithoutStatusIsNotAnAnswer() {
        #expect(throws: JSONShapeError(member: "status", reason: "missing")) {
            try VerifyReceiptResponse(parsing: #"{"receipt":{}}"#)
        }
        #expect(throws: JSONParseError.self) { try VerifyReceiptResponse(parsing: "<html>busy</html>") }
    }

    /// Only a valid answer's receipt is read: a malformed one beside an error status hides nothing.
    @Test func anErrorStatusIgnoresTheRest() throws {
        let answer = try VerifyReceiptResponse(parsing: #"{"status":21007,"receipt":"garbage","latest_receipt_info":7}"#)
        #expect(answer.status == 21007)
        #expect(answer.receipt == nil)
        #expect(throws: JSONShapeError.self) { try VerifyReceiptResponse(parsing: #"{"status":0,"receipt":"garbage"}"#) }
    }
}

/// A legacy re-check says why a subscription expired (`expiration_intent`) and invents no price.
@Suite struct LegacyRecheckTests {
    @Test func anExpiredSubscriptionCarriesApplesIntentAndNoPrice() throws {
        let json = """
            {"status": 0, "environment": "Production", "receipt": {"bundle_id": "b", "in_app": []},
             "latest_receipt_info": [{"transaction_id": "11", "original_transaction_id": "10", "product_id": "vip",
               "purchase_date_ms": "1000", "expires_date_ms": "2000"}],
             "pending_renewal_info": [{"original_transaction_id": "10", "auto_renew_status": "0", "expiration_intent": "1"}]}
            """
        let answer = try VerifyReceiptResponse(parsing: json)
        #expect(answer.pendingRenewalInfo.first?.expirationIntent == 1)
        var receipt = VerifiedReceipt(environment: "Production", bundleID: "b", transactions: answer.transactions)
        receipt.pendingRenewals = answer.pendingRenewalInfo
        let recheck = try #require(receipt.recheck(of: "10", knownExpiresAt: nil, now: 5000))
        #expect(recheck.renewal?.status == "expired" && recheck.renewal?.expirationIntent == 1)
        #expect(recheck.transactions.allSatisfy { $0.price == nil && $0.offerType == nil })
    }
}
