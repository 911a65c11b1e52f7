import IAPOperations
import PipelineCore
import Testing

/// A figures hash's field read back: five parts at the first four `|`, the product last (it may
/// hold one), anything else refused.
@Suite struct DayFigureTests {
    @Test func aFieldIsReadAtItsFirstFourBars() throws {
        let day = FigureDay(number: 20_000)
        let figure = try #require(DayFigure(day: day, field: "gross|Production|DEU|EUR|gems|500 ünï", value: "1234500"))
        #expect(figure == DayFigure(
            day: day, name: "gross", environment: "Production", storefront: "DEU", currency: "EUR", product: "gems|500 ünï", value: 1_234_500))
        let unpriced = try #require(DayFigure(day: day, field: "expired:voluntary|Sandbox|||vip", value: "-2"))
        #expect(unpriced.storefront == "" && unpriced.currency == "" && unpriced.product == "vip" && unpriced.value == -2)
        for (field, value) in [("gross|Production|DEU|EUR", "1"), ("|Production|DEU|EUR|p", "1"), ("gross|P|D|E|p", "x"), ("", "1")] {
            #expect(DayFigure(day: day, field: field, value: value) == nil, "\(field)")
        }
    }
}
