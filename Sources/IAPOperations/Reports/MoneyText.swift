/// Money for people: Apple's milliunits of a currency written as its people write it (`$4.99`,
/// `€1.234,50`, `¥500`), in the currency's minor units (ISO 4217: none for the yen and the won,
/// three for the dinars). By hand: Foundation writes the symbol by the locale, not by the
/// currency, and a console has no locale of its reader to ask.
package enum MoneyText {
    struct Style {
        var symbol: String
        var digits: Int
        var group: String
        var decimal: String
    }

    /// The currencies Apple sells in most, as their own markets write them; any other is
    /// `<code> 1,234.50`.
    static let styles: [String: Style] = [
        "USD": Style(symbol: "$", digits: 2, group: ",", decimal: "."),
        "EUR": Style(symbol: "€", digits: 2, group: ".", decimal: ","),
        "GBP": Style(symbol: "£", digits: 2, group: ",", decimal: "."),
        "JPY": Style(symbol: "¥", digits: 0, group: ",", decimal: "."),
        "KRW": Style(symbol: "₩", digits: 0, group: ",", decimal: "."),
        "CNY": Style(symbol: "CN¥", digits: 2, group: ",", decimal: "."),
        "CAD": Style(symbol: "CA$", digits: 2, group: ",", decimal: "."),
        "AUD": Style(symbol: "A$", digits: 2, group: ",", decimal: "."),
        "INR": Style(symbol: "₹", digits: 2, group: ",", decimal: "."),
        "BRL": Style(symbol: "R$", digits: 2, group: ".", decimal: ","),
        "CHF": Style(symbol: "CHF ", digits: 2, group: "’", decimal: "."),
        "TRY": Style(symbol: "₺", digits: 2, group: ".", decimal: ","),
        "MXN": Style(symbol: "MX$", digits: 2, group: ",", decimal: "."),
    ]

    /// ISO 4217's currencies with no minor unit, or three, among those the App Store sells in.
    static let noMinorUnit: Set<String> = ["JPY", "KRW", "CLP", "VND", "ISK", "UGX", "PYG", "XAF", "XOF", "RWF", "KMF", "GNF", "VUV"]
    static let threeDigits: Set<String> = ["BHD", "KWD", "OMR", "JOD", "TND", "LYD", "IQD"]

    /// `milliunits` of `currency` for people: `$4.99`, `-€1.234,50`; rounded half away from zero
    /// to the currency's minor unit.
    package static func format(milliunits: Int64, currency: String) -> String {
        let digits = noMinorUnit.contains(currency) ? 0 : threeDigits.contains(currency) ? 3 : 2
        let style = styles[currency] ?? Style(symbol: currency + " ", digits: digits, group: ",", decimal: ".")
        let scale = [1000, 100, 10, 1][style.digits]
        let magnitude = milliunits.magnitude
        let minor = (magnitude + UInt64(scale / 2)) / UInt64(scale)
        let unit = [1, 10, 100, 1000][style.digits]
        let whole = String(minor / UInt64(unit))
        var grouped = ""
        for (index, character) in whole.enumerated() {
            if index > 0, (whole.count - index) % 3 == 0 { grouped += style.group }
            grouped.append(character)
        }
        var text = style.symbol + grouped
        if style.digits > 0 {
            let fraction = String(minor % UInt64(unit))
            text += style.decimal + String(repeating: "0", count: style.digits - fraction.count) + fraction
        }
        return (milliunits < 0 && minor > 0 ? "-" : "") + text
    }
}
