import Foundation
import IAPStages
import Testing

/// The catalog's `retention` rules: read against the catalog with each mistake refused by the
/// rule's place and name, and matched first to last over the subscriber's facts.
@Suite struct RetentionRuleTests {
    static let message = "0F6BD64C-3B1E-4D4E-9D3F-5A1E2B7C9D01"

    static func catalog(_ rules: String) throws -> ProductCatalog {
        try ProductCatalog(json: Data(#"""
            {"products": {"vip.monthly": {"type": "auto_renewable", "subscription_group": "vip", "offers": {"comeback": {"eligibility": "any"}}},
                          "vip.yearly": {"type": "auto_renewable", "subscription_group": "vip"}, "gold": {"type": "consumable"}},
             "retention": \#(rules)}
            """#.utf8))
    }

    static let facts = RetentionFacts(
        productID: "vip.monthly", storefront: "USA", tenureMonths: 8, periodsPaid: 7, refunds: 0, netSpend: ["USD": 69_930],
        offerRedeemedBefore: false, sandbox: false)

    @Test func rulesAreReadInOrderWithTheirAnswersAndConditions() throws {
        let rules = try Self.catalog(#"""
            [{"name": "loyal", "when": {"tenure_months": {"at_least": 6}, "refunds": {"below": 1}, "product": ["vip.monthly"],
              "offer_redeemed_before": false}, "promotional_offer": "comeback", "message": "\#(Self.message)"},
             {"name": "whale", "when": {"lifetime_spend": {"currency": "USD", "at_least": 100000}, "storefront": ["USA"]},
              "alternate_product": "vip.yearly", "message": "\#(Self.message)"},
             {"name": "commit", "when": {"periods_paid": {"at_least": 3}, "sandbox": false}, "alternate_product": "vip.monthly",
              "billing_plan_type": "MONTHLY", "message": "\#(Self.message)"},
             {"name": "all", "message": "\#(Self.message)"}]
            """#).retentionRules
        #expect(rules.map(\.name) == ["loyal", "whale", "commit", "all"])
        #expect(rules[0].offer == .promotionalOffer("comeback") && rules[0].message == Self.message.lowercased())
        #expect(rules[1].offer == .alternateProduct("vip.yearly", billingPlanType: nil))
        #expect(rules[2].offer == .alternateProduct("vip.monthly", billingPlanType: "MONTHLY") && rules[3].offer == .none)
        func first(_ facts: RetentionFacts) -> String? { rules.first { $0.matches(facts) }?.name }
        #expect(first(Self.facts) == "loyal")
        var facts = Self.facts
        facts.offerRedeemedBefore = true
        #expect(first(facts) == "commit")
        facts.netSpend = ["USD": 100_000]
        #expect(first(facts) == "whale")
        facts.netSpend = ["EUR": 500_000]  // another currency is no spend in this one
        facts.periodsPaid = 2
        #expect(first(facts) == "all")
        facts = Self.facts
        facts.tenureMonths = nil  // no period on the books: no tenure condition holds
        #expect(first(facts) == "commit")
        #expect(try Self.catalog("[]").retentionRules.isEmpty)
    }

    @Test(arguments: [
        (#"{"name": "a"}"#, "retention must be a list"),
        (#"[{"name": "a", "message": "hello"}]"#, "rule 1 (a): message must be the UUID"),
        (#"[{"name": "a", "message": "\#(message)"}, {"name": "a", "message": "\#(message)"}]"#, "rule 2 (a): the name is given"),
        (#"[{"name": "a", "when": {"tenure": {"at_least": 1}}, "message": "\#(message)"}]"#, "'tenure' is not a condition"),
        (#"[{"name": "a", "when": {"refunds": {}}, "message": "\#(message)"}]"#, "refunds needs at_least, below or both"),
        (#"[{"name": "a", "when": {"periods_paid": {"at_least": 2, "below": 1}}, "message": "\#(message)"}]"#, "at_least must be below below"),
        (#"[{"name": "a", "when": {"lifetime_spend": {"currency": "usd", "at_least": 1}}, "message": "\#(message)"}]"#, "ISO 4217"),
        (#"[{"name": "a", "when": {"product": []}, "message": "\#(message)"}]"#, "product names no product"),
        (#"[{"name": "a", "alternate_product": "gold", "message": "\#(message)"}]"#, "gold is not an auto_renewable product"),
        (#"[{"name": "a", "alternate_product": "vip.yearly", "billing_plan_type": "WEEKLY", "message": "\#(message)"}]"#, "'WEEKLY' is none of"),
        (#"[{"name": "a", "promotional_offer": "comeback", "message": "\#(message)"}]"#, "promotional_offer needs when.product"),
        (#"[{"name": "a", "when": {"product": ["vip.yearly"]}, "promotional_offer": "comeback", "message": "\#(message)"}]"#,
         "comeback is not among the offers of vip.yearly"),
        (#"[{"name": "a", "when": {"product": ["vip.monthly"]}, "promotional_offer": "comeback", "alternate_product": "vip.yearly", "message": "\#(message)"}]"#,
         "alternate_product or promotional_offer, not both"),
        (#"[{"name": "a", "billing_plan_type": "MONTHLY", "message": "\#(message)"}]"#, "billing_plan_type goes with alternate_product"),
        (#"[{"name": "a", "message": "\#(message)", "offer": "x"}]"#, "'offer' is not one of"),
        (#"[{"name": "a b,c", "message": "\#(message)"}]"#, "no comma"),
        (#"[{"name": "a"}]"#, "retention rule 1 (a):"),
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
        let ruled = try Self.catalog(#"[{"name": "all", "message": "\#(Self.message)"}]"#)
        let plain = try Self.catalog("[]")
        #expect(try ProductCatalog.merged([("a", plain), ("b", ruled)]).retentionRules == ruled.retentionRules)
        let other = try Self.catalog(#"[{"name": "other", "message": "\#(Self.message)"}]"#)
        #expect(throws: (any Error).self) { try ProductCatalog.merged([("a", ruled), ("b", other)]) }
    }
}
