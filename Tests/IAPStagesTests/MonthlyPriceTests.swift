import AppleReceipt
import Testing

@testable import IAPStages

/// A subscription period's price as a month's, from the period's dates: Apple's nearest duration
/// in production's days and in the sandbox's accelerated minutes.
@Suite struct MonthlyPriceTests {
    static let day: Int64 = 86_400_000
    static let minute: Int64 = 60_000

    @Test(arguments: [
        (7 * day, false, 43_290), (28 * day, false, 9_990), (31 * day, false, 9_990), (61 * day, false, 4_995),
        (92 * day, false, 3_330), (183 * day, false, 1_665), (365 * day, false, 833), (366 * day, false, 833),
        (3 * minute, true, 43_290), (5 * minute, true, 9_990), (10 * minute, true, 4_995), (15 * minute, true, 3_330),
        (30 * minute, true, 1_665), (60 * minute, true, 833),
    ])
    func aPeriodIsReadAsApplesNearestDuration(periodMs: Int64, sandbox: Bool, monthly: Int64) {
        #expect(MonthlyPrice.milliunits(price: 9_990, periodMs: periodMs, sandbox: sandbox) == monthly)
    }

    @Test func aPeriodWithoutPriceOrDatesHasNone() {
        var transaction = InAppTransaction(transactionID: "1", originalTransactionID: "1", productID: "vip", quantity: 1)
        transaction.purchaseDateMs = "1000"
        transaction.expiresDateMs = String(1000 + 30 * Self.day)
        #expect(MonthlyPrice.milliunits(of: transaction, environment: "Production") == nil)
        transaction.price = "4990"
        #expect(MonthlyPrice.milliunits(of: transaction, environment: "Production") == 4_990)
        transaction.expiresDateMs = "1000"
        #expect(MonthlyPrice.milliunits(of: transaction, environment: "Production") == nil)
        #expect(MonthlyPrice.milliunits(of: nil, environment: "Production") == nil)
    }
}
