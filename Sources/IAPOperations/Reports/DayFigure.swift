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

    /// The field as the hash holds it.
    package var field: String { "\(name)|\(environment)|\(storefront)|\(currency)|\(product)" }

    /// A field and its value as the hash holds them; `nil` for another shape (never written). The
    /// field is cut at its first four `|` by its UTF-8 bytes (a report reads a year's tens of
    /// thousands: `String.split` walks characters, several times slower).
    package init?(day: FigureDay, field: String, value: String) {
        guard let value = Int64(value) else { return nil }
        var parts: [String] = []
        parts.reserveCapacity(5)
        let bytes = field.utf8
        var start = bytes.startIndex
        var index = start
        while index != bytes.endIndex, parts.count < 4 {
            if bytes[index] == UInt8(ascii: "|") {
                parts.append(String(field[start..<index]))
                start = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        guard parts.count == 4, !parts[0].isEmpty else { return nil }
        self.init(
            day: day, name: parts[0], environment: parts[1], storefront: parts[2], currency: parts[3], product: String(field[start...]),
            value: value)
    }
}
