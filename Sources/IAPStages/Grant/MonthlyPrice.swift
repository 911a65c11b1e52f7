import AppleReceipt

/// A subscription period's price as a month's: what the period counts for in the estimated
/// monthly recurring revenue (`mrr`, `count_subscriber.lua`). Apple's transaction says what the
/// period cost and when it starts and ends, not its length in Apple's terms, so the length is
/// read from its dates: the nearest of Apple's durations (a week, 1, 2, 3 or 6 months, a year),
/// in days in production, in the sandbox's accelerated minutes there (3 minutes a week, 5 a
/// month, 10, 15, 30, 60 a year: Apple's default sandbox rates). An estimate, said so wherever
/// it is shown.
package enum MonthlyPrice {
    /// Apple's durations in months, with the upper bound of the dates' length (days in
    /// production, minutes in the sandbox) read as each.
    private static let durations: [(months: Double, productionDays: Double, sandboxMinutes: Double)] = [
        (12.0 / 52.0, 15, 4), (1, 45, 7.5), (2, 75, 12.5), (3, 135, 22.5), (6, 270, 45), (12, .infinity, .infinity),
    ]

    /// The month's price in milliunits of the period's currency; `nil` without a price or dates
    /// (a legacy receipt) or for a period that ends before it starts.
    package static func milliunits(of transaction: InAppTransaction?, environment: String) -> Int64? {
        guard let transaction, let price = transaction.price.flatMap({ Int64($0) }),
            let start = transaction.purchaseDateMs.flatMap({ Int64($0) }), let end = transaction.expiresDateMs.flatMap({ Int64($0) }),
            end > start
        else { return nil }
        return milliunits(price: price, periodMs: end - start, sandbox: environment == "Sandbox")
    }

    package static func milliunits(price: Int64, periodMs: Int64, sandbox: Bool) -> Int64 {
        let length = sandbox ? Double(periodMs) / 60_000 : Double(periodMs) / 86_400_000
        let months = durations.first { length < (sandbox ? $0.sandboxMinutes : $0.productionDays) }?.months ?? 12
        return Int64((Double(price) / months).rounded())
    }
}
