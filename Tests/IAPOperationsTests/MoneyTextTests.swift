import IAPOperations
import Testing

/// Apple's milliunits written for people, in each currency's own way and minor units.
@Suite struct MoneyTextTests {
    @Test func eachCurrencyIsWrittenAsItsPeopleWriteIt() {
        for (milliunits, currency, text) in [
            (4_990, "USD", "$4.99"), (1_234_500, "EUR", "€1.234,50"), (0, "GBP", "£0.00"), (500_000, "JPY", "¥500"),
            (1_100_000, "KRW", "₩1,100"), (990, "USD", "$0.99"), (1_234_567_890, "USD", "$1,234,567.89"), (-4_990, "EUR", "-€4,99"),
            (1_235, "USD", "$1.24"), (1_234, "USD", "$1.23"), (12_345, "KWD", "KWD 12.345"), (9_990, "SEK", "SEK 9.99"),
            (-4, "USD", "$0.00"), (99_000, "BRL", "R$99,00"), (1_000_000, "CHF", "CHF 1’000.00"),
        ] {
            #expect(MoneyText.format(milliunits: Int64(milliunits), currency: currency) == text, "\(milliunits) \(currency)")
        }
    }
}
