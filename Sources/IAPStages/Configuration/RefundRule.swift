import AppStoreServerAPI
import Foundation

/// One of the catalog's `refund_preference` rules: the refund preference the notifier sends with
/// its answer to a `CONSUMPTION_REQUEST` whose facts meet every condition of `when` (the first
/// rule that matches decides; none: `IAP_REFUND_PREFERENCE`, the rule of last resort).
///
/// `{"name": "fresh_mistake", "when": {"reason": ["UNINTENDED_PURCHASE"], "days_since_purchase":
/// {"below": 2}, "consumed_percent": {"below": 10}}, "preference": "grant_full"}`. Conditions:
/// `reason` and `storefront` (lists of Apple's words), `days_since_purchase`, `consumed_percent`
/// (what the game recorded), `refunds_before` (the user's, prorated ones as their share) as
/// `{"at_least": x, "below": y}`, `lifetime_spend` (`{"currency": "USD", "at_least", "below"}`: the
/// user's net spend in that currency, milliunits), `delivered` and `sandbox` as booleans. A condition over a fact
/// that is not known (no storefront, no purchase date, nothing recorded by the game) does not hold.
package struct RefundRule: Sendable, Equatable {
    package var name: String
    package var conditions: Conditions
    /// `nil`: the facts are sent without a preference (`none`).
    package var preference: ConsumptionInformation.RefundPreference?

    package struct Conditions: Sendable, Equatable {
        package var reasons: Set<String>?
        package var storefronts: Set<String>?
        package var daysSincePurchase: Bounds?
        package var consumedPercent: Bounds?
        package var refundsBefore: Bounds?
        /// The user's net spend in one currency (`RetentionRule.Spend`: milliunits).
        package var lifetimeSpend: RetentionRule.Spend?
        package var delivered: Bool?
        package var sandbox: Bool?

        package init(
            reasons: Set<String>? = nil, storefronts: Set<String>? = nil, daysSincePurchase: Bounds? = nil,
            consumedPercent: Bounds? = nil, refundsBefore: Bounds? = nil, lifetimeSpend: RetentionRule.Spend? = nil,
            delivered: Bool? = nil, sandbox: Bool? = nil
        ) {
            self.lifetimeSpend = lifetimeSpend
            self.reasons = reasons
            self.storefronts = storefronts
            self.daysSincePurchase = daysSincePurchase
            self.consumedPercent = consumedPercent
            self.refundsBefore = refundsBefore
            self.delivered = delivered
            self.sandbox = sandbox
        }
    }

    /// `at_least ≤ x < below`, either end open.
    package struct Bounds: Sendable, Equatable, Decodable {
        package var atLeast: Double?
        package var below: Double?

        package init(atLeast: Double? = nil, below: Double? = nil) {
            self.atLeast = atLeast
            self.below = below
        }

        func contains(_ value: Double?) -> Bool {
            guard let value else { return false }
            return value >= (atLeast ?? -.infinity) && value < (below ?? .infinity)
        }

        enum CodingKeys: String, CodingKey {
            case atLeast = "at_least"
            case below
        }
    }

    package init(name: String, conditions: Conditions, preference: ConsumptionInformation.RefundPreference?) {
        self.name = name
        self.conditions = conditions
        self.preference = preference
    }

    /// Whether every condition holds for `facts`.
    package func matches(_ facts: RefundFacts) -> Bool {
        let when = conditions
        if let reasons = when.reasons, !reasons.contains(facts.reason ?? "") { return false }
        if let storefronts = when.storefronts, !storefronts.contains(facts.storefront ?? "") { return false }
        if let bounds = when.daysSincePurchase, !bounds.contains(facts.daysSincePurchase) { return false }
        if let bounds = when.consumedPercent, !bounds.contains(facts.consumedPercent) { return false }
        if let bounds = when.refundsBefore, !bounds.contains(facts.refundsBefore) { return false }
        if let spend = when.lifetimeSpend, !spend.bounds.contains(Double(facts.netSpend[spend.currency] ?? 0)) { return false }
        if let delivered = when.delivered, delivered != facts.delivered { return false }
        if let sandbox = when.sandbox, sandbox != facts.sandbox { return false }
        return true
    }

    /// The name an answer records when no rule matched: the setting decided.
    package static let lastResort = "IAP_REFUND_PREFERENCE"

    /// The first of `rules` that matches `facts`.
    package static func first(of rules: [RefundRule], matching facts: RefundFacts) -> RefundRule? {
        rules.first { $0.matches(facts) }
    }
}

/// What a refund rule is decided on: the request's and the purchase's facts.
package struct RefundFacts: Sendable, Equatable {
    /// Apple's `consumptionRequestReason`.
    package var reason: String?
    package var storefront: String?
    package var daysSincePurchase: Double?
    /// Of the purchase, what the game recorded (0–100); `nil`: nothing recorded.
    package var consumedPercent: Double?
    /// The user's refunds before this one (a prorated refund as its share).
    package var refundsBefore: Double
    /// The user's net spend by currency (milliunits), of every purchase they hold; read only when a
    /// rule asks about it.
    package var netSpend: [String: Int64]
    package var delivered: Bool
    package var sandbox: Bool

    package init(
        reason: String?, storefront: String?, daysSincePurchase: Double?, consumedPercent: Double?, refundsBefore: Double,
        netSpend: [String: Int64] = [:], delivered: Bool, sandbox: Bool
    ) {
        self.netSpend = netSpend
        self.reason = reason
        self.storefront = storefront
        self.daysSincePurchase = daysSincePurchase
        self.consumedPercent = consumedPercent
        self.refundsBefore = refundsBefore
        self.delivered = delivered
        self.sandbox = sandbox
    }
}

extension RefundRule {
    /// The catalog's `refund_preference` list as written; a rule that cannot be read is refused
    /// with its place and name.
    struct File: Decodable {
        var name: String
        var when: When?
        var preference: String

        struct When: Decodable {
            var reason: [String]?
            var storefront: [String]?
            var daysSincePurchase: Bounds?
            var consumedPercent: Bounds?
            var refundsBefore: Bounds?
            var lifetimeSpend: RetentionRule.Spend?
            var delivered: Bool?
            var sandbox: Bool?

            enum CodingKeys: String, CodingKey, CaseIterable {
                case reason, storefront, delivered, sandbox
                case daysSincePurchase = "days_since_purchase"
                case consumedPercent = "consumed_percent"
                case refundsBefore = "refunds_before"
                case lifetimeSpend = "lifetime_spend"
            }
        }
    }

    /// Reads the rules (`refund_preference` of the products file), each checked: a name (1 to 64
    /// printable ASCII characters, no comma, once), a known preference word, known reasons,
    /// bounds whose lower end is below their upper, only conditions this type knows.
    static func rules(_ json: Any?) throws -> [RefundRule] {
        try ProductCatalog.namedRules(json, member: "refund_preference", name: \.name) { try read($0, label: $1) }
    }

    private static func read(_ item: Any, label: String) throws -> RefundRule {
        func refuse(_ why: String) -> ProductCatalog.CatalogError { ProductCatalog.CatalogError(reason: "\(label): \(why)") }
        guard let object = item as? [String: Any] else { throw refuse("a rule is an object") }
        if let unknown = object.keys.sorted().first(where: { !["name", "when", "preference"].contains($0) }) {
            throw refuse("'\(unknown)' is not name, when or preference")
        }
        if let when = object["when"] as? [String: Any],
            let unknown = when.keys.sorted().first(where: { key in !File.When.CodingKeys.allCases.contains { $0.stringValue == key } })
        {
            throw refuse("'\(unknown)' is not a condition (\(File.When.CodingKeys.allCases.map(\.stringValue).joined(separator: ", ")))")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: try JSONSerialization.data(withJSONObject: object))
        } catch {
            throw refuse("\(error)")
        }
        guard ProductCatalog.isName(file.name), file.name != lastResort else {
            throw refuse("the name must be 1 to 64 printable ASCII characters, no comma, and not \(lastResort)")
        }
        let word = file.preference.lowercased()
        guard RefundPreferences.choices.contains(word) else {
            throw refuse("'\(file.preference)' is none of \(RefundPreferences.choices.joined(separator: ", "))")
        }
        let when = file.when
        if let bad = when?.reason?.first(where: { !RefundPreferences.reasons.contains($0) }) {
            throw refuse("'\(bad)' is none of \(RefundPreferences.reasons.joined(separator: ", "))")
        }
        if let spend = when?.lifetimeSpend, !spend.isCurrency { throw refuse("lifetime_spend: currency must be an ISO 4217 code such as USD") }
        for (name, bounds) in [("days_since_purchase", when?.daysSincePurchase), ("consumed_percent", when?.consumedPercent),
                               ("refunds_before", when?.refundsBefore), ("lifetime_spend", when?.lifetimeSpend?.bounds)] {
            guard let bounds else { continue }
            if bounds.atLeast == nil, bounds.below == nil { throw refuse("\(name) needs at_least, below or both") }
            if let low = bounds.atLeast, let high = bounds.below, low >= high { throw refuse("\(name): at_least must be below below") }
        }
        return RefundRule(
            name: file.name,
            conditions: Conditions(
                reasons: when?.reason.map(Set.init), storefronts: when?.storefront.map(Set.init),
                daysSincePurchase: when?.daysSincePurchase, consumedPercent: when?.consumedPercent,
                refundsBefore: when?.refundsBefore, lifetimeSpend: when?.lifetimeSpend, delivered: when?.delivered, sandbox: when?.sandbox),
            preference: word == "none" ? nil : ConsumptionInformation.RefundPreference(rawValue: word.uppercased()))
    }
}
