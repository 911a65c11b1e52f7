/// Right-aligned columns for the drill's and the bench's printed results.
package enum TextTable {
    /// `header`, then `rows`; a rule goes before the row at each index in `rulesBefore`.
    package static func render(header: [String], rows: [[String]], rulesBefore: Set<Int> = []) -> String {
        let widths = header.indices.map { column in ([header] + rows).map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { String(repeating: " ", count: max(0, $1 - $0.count)) + $0 }.joined(separator: "  ")
        }
        let rule = String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1))
        var text = [line(header)]
        for (index, row) in rows.enumerated() {
            if rulesBefore.contains(index) { text.append(rule) }
            text.append(line(row))
        }
        return text.joined(separator: "\n")
    }
}
