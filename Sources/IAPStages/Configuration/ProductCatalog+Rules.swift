extension ProductCatalog {
    /// A catalog's list of named rules (`refund_preference`, `retention`) as written: each read by
    /// `read` with the label that names it in a refusal (`retention rule 2 (loyal)`), every name
    /// given once.
    static func namedRules<Rule>(
        _ json: Any?, member: String, name: (Rule) -> String, read: (_ item: Any, _ label: String) throws -> Rule
    ) throws -> [Rule] {
        guard let json else { return [] }
        guard let list = json as? [Any] else { throw CatalogError(reason: "\(member) must be a list of rules") }
        var rules: [Rule] = []
        for (place, item) in list.enumerated() {
            let label = ((item as? [String: Any])?["name"] as? String).map { "\(member) rule \(place + 1) (\($0))" }
                ?? "\(member) rule \(place + 1)"
            let rule = try read(item, label)
            if rules.contains(where: { name($0) == name(rule) }) {
                throw CatalogError(reason: "\(label): the name is given to an earlier rule too")
            }
            rules.append(rule)
        }
        return rules
    }
}
