import AppStoreServerAPI
import Foundation
import IAPStages
import Testing

/// The catalog's `refund_preference` rules: read with each mistake refused by the rule's place
/// and name, and matched first to last over the request's facts.
@Suite struct RefundRuleTests {
    static func catalog(_ rules: String) throws -> ProductCatalog {
        try ProductCatalog(json: Data(#"{"products": {"gold.100": {"type": "consumable"}}, "refund_preference": \#(rules)}"#.utf8))
    }

    static let facts = RefundFacts(
        reason: "UNINTENDED_PURCHASE", storefront: "JPN", daysSincePurchase: 1.5, consumedPercent: 5, refundsBefore: 0,
        delivered: true, sandbox: false)

    @Test func rulesAreReadInOrderWithTheirConditions() throws {
        let rules = try Self.catalog(#"""
            [{"name": "repeat", "when": {"refunds_before": {"at_least": 2}}, "preference": "decline"},
             {"name": "fresh_mistake", "when": {"reason": ["UNINTENDED_PURCHASE"], "days_since_purchase": {"below": 2},
              "consumed_percent": {"below": 10}, "delivered": true, "sandbox": false}, "preference": "GRANT_FULL"},
             {"name": "japan", "when": {"storefront": ["JPN"]}, "preference": "none"}]
            """#).refundRules
        #expect(rules.map(\.name) == ["repeat", "fresh_mistake", "japan"])
        #expect(rules[0].preference == .decline && rules[1].preference == .grantFull && rules[2].preference == nil)
        #expect(RefundRule.first(of: rules, matching: Self.facts)?.name == "fresh_mistake")
        var facts = Self.facts
        facts.refundsBefore = 2
        #expect(RefundRule.first(of: rules, matching: facts)?.name == "repeat")
        facts.refundsBefore = 1.5
        facts.consumedPercent = 10  // `below` is exclusive
        #expect(RefundRule.first(of: rules, matching: facts)?.name == "japan")
        facts.storefront = nil  // a fact not known meets no condition over it
        #expect(RefundRule.first(of: rules, matching: facts) == nil)
        #expect(try Self.catalog("[]").refundRules.isEmpty)
        #expect(try ProductCatalog(json: Data(#"{"products": {}}"#.utf8)).refundRules.isEmpty)
    }

    /// `lifetime_spend`: the user's net spend in the rule's currency, another currency counting nothing.
    @Test func aRuleCanAskWhatTheUserSpent() throws {
        let rules = try Self.catalog(#"[{"name": "whale", "when": {"lifetime_spend": {"currency": "USD", "at_least": 100000}}, "preference": "grant_full"}]"#).refundRules
        #expect(rules[0].conditions.lifetimeSpend?.currency == "USD")
        var facts = Self.facts
        #expect(RefundRule.first(of: rules, matching: facts) == nil)
        facts.netSpend = ["EUR": 500_000, "USD": 99_999]
        #expect(RefundRule.first(of: rules, matching: facts) == nil)
        facts.netSpend["USD"] = 100_000
        #expect(RefundRule.first(of: rules, matching: facts)?.name == "whale")
    }

    /// A rule with no conditions matches every request: the catch-all at the end of a list.
    @Test func aRuleWithoutConditionsMatchesEveryRequest() throws {
        let rules = try Self.catalog(#"[{"name": "all", "preference": "grant_prorated"}]"#).refundRules
        #expect(RefundRule.first(of: rules, matching: Self.facts)?.preference == .grantProrated)
    }

    @Test(arguments: [
        (#"{"name": "a"}"#, "refund_preference must be a list"),
        (#"[{"when": {}, "preference": "decline"}]"#, "refund_preference rule 1:"),
        (#"[{"name": "a", "preference": "refuse"}]"#, "rule 1 (a): 'refuse' is none of none, decline, grant_full, grant_prorated"),
        (#"[{"name": "a", "preference": "decline"}, {"name": "a", "preference": "decline"}]"#, "rule 2 (a): the name is given to an earlier rule too"),
        (#"[{"name": "a", "when": {"country": ["JPN"]}, "preference": "decline"}]"#, "rule 1 (a): 'country' is not a condition"),
        (#"[{"name": "a", "when": {"reason": ["MISTAKE"]}, "preference": "decline"}]"#, "rule 1 (a): 'MISTAKE' is none of"),
        (#"[{"name": "a", "when": {"days_since_purchase": {}}, "preference": "decline"}]"#, "days_since_purchase needs at_least, below or both"),
        (#"[{"name": "a", "when": {"refunds_before": {"at_least": 3, "below": 3}}, "preference": "decline"}]"#, "at_least must be below below"),
        (#"[{"name": "a", "when": {"delivered": "yes"}, "preference": "decline"}]"#, "rule 1 (a):"),
        (#"[{"name": "a", "when": {"lifetime_spend": {"currency": "dollars", "at_least": 1}}, "preference": "decline"}]"#, "ISO 4217"),
        (#"[{"name": "a", "when": {"lifetime_spend": {"currency": "USD"}}, "preference": "decline"}]"#, "lifetime_spend needs at_least, below or both"),
        (#"[{"name": "a,b", "preference": "decline"}]"#, "no comma"),
        (#"[{"name": "IAP_REFUND_PREFERENCE", "preference": "decline"}]"#, "not IAP_REFUND_PREFERENCE"),
        (#"[{"name": "a", "preference": "decline", "then": 1}]"#, "'then' is not name, when or preference"),
    ])
    func aRuleThatCannotBeReadIsRefusedByName(rules: String, message: String) {
        #expect {
            try Self.catalog(rules)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    /// Several apps' catalogs: one set of rules, or the same rules in each.
    @Test func appsShareOneSetOfRules() throws {
        let ruled = try Self.catalog(#"[{"name": "all", "preference": "decline"}]"#)
        let plain = try ProductCatalog(json: Data(#"{"products": {"gold.100": {"type": "consumable"}}}"#.utf8))
        #expect(try ProductCatalog.merged([("a", plain), ("b", ruled)]).refundRules == ruled.refundRules)
        #expect(try ProductCatalog.merged([("a", ruled), ("b", ruled)]).refundRules == ruled.refundRules)
        let other = try Self.catalog(#"[{"name": "all", "preference": "grant_full"}]"#)
        #expect(throws: (any Error).self) { try ProductCatalog.merged([("a", ruled), ("b", other)]) }
    }
}
