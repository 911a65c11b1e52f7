import AppleJWS
import Foundation
import Testing

/// A signed transaction reads itself with PlainJSON (`JWSTransaction.decode(signed:)`); these hold
/// it to the answers of Foundation's `JSONDecoder` over the `Codable` conformance, for what Apple
/// sends and for what it must not be trusted to send.
@Suite struct JWSTransactionTests {
    static let full = #"""
        {"transactionId":"2000000123456789","originalTransactionId":"2000000123456700","webOrderLineItemId":"2000000012345678",
        "bundleId":"com.example.game","productId":"com.example.game.vip.month","subscriptionGroupIdentifier":"21345678",
        "purchaseDate":1764374400000,"originalPurchaseDate":1761782400000,"expiresDate":1766966400000,"quantity":1,
        "type":"Auto-Renewable Subscription","appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138",
        "inAppOwnershipType":"PURCHASED","signedDate":1764374401234,"revocationDate":1764460800000,"revocationReason":1,
        "revocationType":"REFUND_PRORATED","revocationPercentage":50000,"transactionReason":"RENEWAL","environment":"Sandbox",
        "storefront":"FRA","storefrontId":"143442","price":4990,"currency":"EUR","offerType":2,"offerIdentifier":"winback.1",
        "offerDiscountType":"PAY_AS_YOU_GO","offerPeriod":"P1M","appTransactionId":"704289572311220010","deviceVerification":"x",
        "billingPlanType":"MONTHLY","commitmentInfo":{"billingPeriodNumber":3,"totalBillingPeriods":12,
        "commitmentExpiresDate":1793318400000,"commitmentPrice":4990,"later":true}}
        """#

    static let cases: [String] = [
        full,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p"}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","quantity":null,"price":null}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","extra":{"a":[1,2,{"b":null}]}}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","commitmentInfo":null}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","commitmentInfo":{"commitmentPrice":null}}"#,
        // Names with escapes are the names they spell; names that only begin like one are not it.
        #"{"transaction\u0049d":"1","originalTransactionId":"1","bundleId":"b","productId":"p","pric\u0065":5,"priceX":"a"}"#,
    ]

    static let refused: [String] = [
        #"{"originalTransactionId":"1","bundleId":"b","productId":"p"}"#,
        #"{"transactionId":1,"originalTransactionId":"1","bundleId":"b","productId":"p"}"#,
        #"{"transactionId":null,"originalTransactionId":"1","bundleId":"b","productId":"p"}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","quantity":"1"}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","purchaseDate":"1764374400000"}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","price":1.5}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","offerType":99999999999999999999}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","environment":true}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","commitmentInfo":[]}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","commitmentInfo":{"billingPeriodNumber":"3"}}"#,
        #"{"transactionId":"1","originalTransactionId":"1","bundleId":"b","productId":"p","billingPlanType":1}"#,
        #"["transactionId"]"#, #"{"transactionId":"1""#, "",
    ]

    @Test("what Apple sends reads the same as JSONDecoder reads it", arguments: cases)
    func readsAsCodableDoes(_ text: String) throws {
        let bytes = Array(text.utf8)
        let expected = try JSONDecoder().decode(JWSTransaction.self, from: Data(bytes))
        #expect(try JWSTransaction.decode(signed: bytes) == expected)
    }

    @Test("what JSONDecoder refuses is refused", arguments: refused)
    func refusesWhatCodableRefuses(_ text: String) {
        let bytes = Array(text.utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(JWSTransaction.self, from: Data(bytes)) }
        #expect(throws: (any Error).self) { try JWSTransaction.decode(signed: bytes) }
    }

    @Test func everyMemberOfAFullTransactionIsRead() throws {
        let transaction = try JWSTransaction.decode(signed: Array(Self.full.utf8))
        #expect(transaction.revocationPercentage == 50000 && transaction.offerPeriod == "P1M" && transaction.price == 4990)
        #expect(transaction.appTransactionID == "704289572311220010" && transaction.quantity == 1 && transaction.environment == "Sandbox")
        #expect(transaction.billingPlanType == "MONTHLY" && transaction.commitmentInfo == TransactionCommitment(
            billingPeriodNumber: 3, totalBillingPeriods: 12, commitmentExpiresDate: 1_793_318_400_000, commitmentPrice: 4990))
    }
}
