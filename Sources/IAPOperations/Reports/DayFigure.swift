import PipelineCore

/// One figure of one day as `count_figures.lua` counted it: a field of `figures:<day>`,
/// `<figure>|<environment>|<storefront>|<currency>|<product>` (the product last: it may hold a
/// `|`), and its value summed over the buckets.
package struct DayFigure: Sendable, Equatable {
    package var day: FigureDay
    package var name: String
    package var environment: String
    package var storefront: String
    package var currency: String
    package var product: String
    package var value: Int64

    package init(day: FigureDay, name: String, environment: String, storefront: String, currency: String, product: String, value: Int64) {
        self.day = day
        self.name = name
        self.environment = environment
        self.storefront = storefront
        self.currency = currency
        self.product = product
        self.value = value
    }

    /// A field and its value as the hash holds them; `nil` for another shape (never written).
    package init?(day: FigureDay, field: String, value: String) {
        let parts = field.split(separator: "|", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, !parts[0].isEmpty, let value = Int64(value) else { return nil }
        self.init(
            day: day, name: String(parts[0]), environment: String(parts[1]), storefront: String(parts[2]),
            currency: String(parts[3]), product: String(parts[4]), value: value)
    }
}
