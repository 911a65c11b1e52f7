import Foundation

/// One of the catalog's `retention` rules: what the intake answers Apple's real-time retention
/// request with (`POST /v1/apple/retention`) when a subscriber whose facts meet every condition of
/// `when` opens the page where they may cancel. The first rule that matches decides; none: the
/// answer is empty and Apple shows the product's default message.
///
/// `{"name": "loyal_comeback", "when": {"tenure_months": {"at_least": 6}, "refunds": {"below": 1},
/// "product": ["vip.monthly"]}, "promotional_offer": "comeback_50", "message": "<uuid>"}`. An
/// answer is one of: the `message` alone (text, with or without an image); the message with
/// `alternate_product` (a switch-plan message; `billing_plan_type` `MONTHLY` offers the 12-month
/// commitment plan); the message with `promotional_offer` (one of the product's `offers`, signed
/// by the app's In-App Purchase key). Conditions: `tenure_months` (since the subscription's first
/// period), `periods_paid` (its periods not in a free trial), `refunds` (the owner's, prorated ones
/// as their share), `lifetime_spend` (`{"currency": "USD", "at_least", "below"}`: the owner's net
/// spend in that currency, Apple's milliunits) as bounds; `product` and `storefront` as lists;
/// `offer_redeemed_before` (a period of this subscription was bought with a promotional, offer
/// code, win-back or retention offer) and `sandbox` as booleans. A condition over a fact that is
/// not known does not hold.
package struct RetentionRule: Sendable, Equatable {
    package var name: String
    package var conditions: Conditions
    /// Apple's `messageIdentifier` (a UUID, lower-case): a message set up in advance (`iapctl apple retention`).
    package var message: String
    package var offer: Offer

    package enum Offer: Sendable, Equatable {
        /// The message alone.
        case none
        /// A switch-plan message: a product of the same subscription group, and the plan to bill it by.
        case alternateProduct(String, billingPlanType: String?)
        /// A promotional-offer message: an offer id of the request's product (its `offers`).
        case promotionalOffer(String)
    }

    package struct Conditions: Sendable, Equatable {
        package var tenureMonths: RefundRule.Bounds?
        package var periodsPaid: RefundRule.Bounds?
        package var refunds: RefundRule.Bounds?
        package var lifetimeSpend: Spend?
        package var products: Set<String>?
        package var storefronts: Set<String>?
        package var offerRedeemedBefore: Bool?
        package var sandbox: Bool?

        package init(
            tenureMonths: RefundRule.Bounds? = nil, periodsPaid: RefundRule.Bounds? = nil, refunds: RefundRule.Bounds? = nil,
            lifetimeSpend: Spend? = nil, products: Set<String>? = nil, storefronts: Set<String>? = nil,
            offerRedeemedBefore: Bool? = nil, sandbox: Bool? = nil
        ) {
            self.tenureMonths = tenureMonths
            self.periodsPaid = periodsPaid
            self.refunds = refunds
            self.lifetimeSpend = lifetimeSpend
            self.products = products
            self.storefronts = storefronts
            self.offerRedeemedBefore = offerRedeemedBefore
            self.sandbox = sandbox
        }
    }

    /// Net spend in one currency, bounded (Apple's milliunits: 49990 is 49.99).
    package struct Spend: Sendable, Equatable, Decodable {
        package var currency: String
        package var atLeast: Double?
        package var below: Double?

        var bounds: RefundRule.Bounds { RefundRule.Bounds(atLeast: atLeast, below: below) }
        /// An ISO 4217 code's shape: three capital letters.
        var isCurrency: Bool { currency.utf8.count == 3 && currency.allSatisfy { $0.isASCII && $0.isUppercase } }

        enum CodingKeys: String, CodingKey {
            case currency, below
            case atLeast = "at_least"
        }
    }

    package init(name: String, conditions: Conditions, message: String, offer: Offer) {
        self.name = name
        self.conditions = conditions
        self.message = message
        self.offer = offer
    }

    /// Whether every condition holds for `facts`.
    package func matches(_ facts: RetentionFacts) -> Bool {
        let when = conditions
        if let bounds = when.tenureMonths, !bounds.contains(facts.tenureMonths) { return false }
        if let bounds = when.periodsPaid, !bounds.contains(Double(facts.periodsPaid)) { return false }
        if let bounds = when.refunds, !bounds.contains(facts.refunds) { return false }
        if let spend = when.lifetimeSpend, !spend.bounds.contains(Double(facts.netSpend[spend.currency] ?? 0)) { return false }
        if let products = when.products, !products.contains(facts.productID) { return false }
        if let storefronts = when.storefronts, !storefronts.contains(facts.storefront ?? "") { return false }
        if let redeemed = when.offerRedeemedBefore, redeemed != facts.offerRedeemedBefore { return false }
        if let sandbox = when.sandbox, sandbox != facts.sandbox { return false }
        return true
    }

    /// The billing plans a switch-plan message may name.
    package static let billingPlans: Set<String> = ["BILLED_UPFRONT", "MONTHLY"]
}

/// What a retention rule is decided on: the subscriber's history as the books hold it.
package struct RetentionFacts: Sendable, Equatable {
    /// The product of the request (the subscription the subscriber looks at).
    package var productID: String
    /// The latest period's storefront.
    package var storefront: String?
    /// Months (of 30.44 days) since the first period was bought; `nil`: no period is on the books.
    package var tenureMonths: Double?
    /// The subscription's periods on the books not in a free trial.
    package var periodsPaid: Int
    /// The owner's refunds (a prorated refund as its share).
    package var refunds: Double
    /// The owner's net spend by currency (milliunits), every purchase they hold.
    package var netSpend: [String: Int64]
    package var offerRedeemedBefore: Bool
    package var sandbox: Bool

    package init(
        productID: String, storefront: String?, tenureMonths: Double?, periodsPaid: Int, refunds: Double, netSpend: [String: Int64],
        offerRedeemedBefore: Bool, sandbox: Bool
    ) {
        self.productID = productID
        self.storefront = storefront
        self.tenureMonths = tenureMonths
        self.periodsPaid = periodsPaid
        self.refunds = refunds
        self.netSpend = netSpend
        self.offerRedeemedBefore = offerRedeemedBefore
        self.sandbox = sandbox
    }
}

extension RetentionRule {
    struct File: Decodable {
        var name: String
        var when: When?
        var message: String
        var alternateProduct: String?
        var billingPlanType: String?
        var promotionalOffer: String?

        struct When: Decodable {
            var tenureMonths: RefundRule.Bounds?
            var periodsPaid: RefundRule.Bounds?
            var refunds: RefundRule.Bounds?
            var lifetimeSpend: Spend?
            var product: [String]?
            var storefront: [String]?
            var offerRedeemedBefore: Bool?
            var sandbox: Bool?

            enum CodingKeys: String, CodingKey, CaseIterable {
                case refunds, product, storefront, sandbox
                case tenureMonths = "tenure_months"
                case periodsPaid = "periods_paid"
                case lifetimeSpend = "lifetime_spend"
                case offerRedeemedBefore = "offer_redeemed_before"
            }
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, when, message
            case alternateProduct = "alternate_product"
            case billingPlanType = "billing_plan_type"
            case promotionalOffer = "promotional_offer"
        }
    }

    /// Reads the rules (`retention` of the products file), each checked against `catalog`: a name
    /// (1 to 64 printable ASCII characters, no comma, once), a message that is a UUID, at most one
    /// of `alternate_product` (an auto-renewable product of the catalog) and `promotional_offer`
    /// (which needs `when.product`, each of them listing the offer in its `offers`), known
    /// conditions only, bounds whose lower end is below their upper.
    static func rules(_ json: Any?, catalog: ProductCatalog) throws -> [RetentionRule] {
        try ProductCatalog.namedRules(json, member: "retention", name: \.name) { try read($0, label: $1, catalog: catalog) }
    }

    private static func read(_ item: Any, label: String, catalog: ProductCatalog) throws -> RetentionRule {
        func refuse(_ why: String) -> ProductCatalog.CatalogError { ProductCatalog.CatalogError(reason: "\(label): \(why)") }
        guard let object = item as? [String: Any] else { throw refuse("a rule is an object") }
        let members = File.CodingKeys.allCases.map(\.stringValue)
        if let unknown = object.keys.sorted().first(where: { !members.contains($0) }) {
            throw refuse("'\(unknown)' is not one of \(members.joined(separator: ", "))")
        }
        let conditions = File.When.CodingKeys.allCases.map(\.stringValue)
        if let when = object["when"] as? [String: Any], let unknown = when.keys.sorted().first(where: { !conditions.contains($0) }) {
            throw refuse("'\(unknown)' is not a condition (\(conditions.joined(separator: ", ")))")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: try JSONSerialization.data(withJSONObject: object))
        } catch {
            throw refuse("\(error)")
        }
        guard ProductCatalog.isName(file.name) else { throw refuse("the name must be 1 to 64 printable ASCII characters, no comma") }
        guard let message = UUID(uuidString: file.message)?.uuidString.lowercased() else {
            throw refuse("message must be the UUID of a message set up with Apple ('\(file.message.prefix(64))' is not)")
        }
        let when = file.when
        try checkBounds(when, refuse)
        return RetentionRule(
            name: file.name,
            conditions: Conditions(
                tenureMonths: when?.tenureMonths, periodsPaid: when?.periodsPaid, refunds: when?.refunds, lifetimeSpend: when?.lifetimeSpend,
                products: when?.product.map(Set.init), storefronts: when?.storefront.map(Set.init),
                offerRedeemedBefore: when?.offerRedeemedBefore, sandbox: when?.sandbox),
            message: message, offer: try offer(file, catalog: catalog, refuse))
    }

    private static func checkBounds(_ when: File.When?, _ refuse: (String) -> ProductCatalog.CatalogError) throws {
        let spend = when?.lifetimeSpend
        if let spend, !spend.isCurrency {
            throw refuse("lifetime_spend: currency must be an ISO 4217 code such as USD")
        }
        for (name, bounds) in [("tenure_months", when?.tenureMonths), ("periods_paid", when?.periodsPaid), ("refunds", when?.refunds),
                               ("lifetime_spend", spend?.bounds)] {
            guard let bounds else { continue }
            if bounds.atLeast == nil, bounds.below == nil { throw refuse("\(name) needs at_least, below or both") }
            if let low = bounds.atLeast, let high = bounds.below, low >= high { throw refuse("\(name): at_least must be below below") }
        }
        if let products = when?.product, products.isEmpty { throw refuse("product names no product") }
    }

    private static func offer(_ file: File, catalog: ProductCatalog, _ refuse: (String) -> ProductCatalog.CatalogError) throws -> Offer {
        switch (file.alternateProduct, file.promotionalOffer) {
        case (.some, .some):
            throw refuse("a rule answers alternate_product or promotional_offer, not both")
        case (.some(let product), nil):
            guard catalog.products[product] == .autoRenewable else {
                throw refuse("alternate_product \(product.prefix(128)) is not an auto_renewable product of the catalog")
            }
            if let plan = file.billingPlanType, !billingPlans.contains(plan) {
                throw refuse("billing_plan_type '\(plan.prefix(32))' is none of \(billingPlans.sorted().joined(separator: ", "))")
            }
            return .alternateProduct(product, billingPlanType: file.billingPlanType)
        case (nil, .some(let offer)):
            if file.billingPlanType != nil { throw refuse("billing_plan_type goes with alternate_product") }
            guard let products = file.when?.product else {
                throw refuse("promotional_offer needs when.product: the products whose offers list \(offer.prefix(64))")
            }
            if let missing = products.sorted().first(where: { catalog.offers[$0]?[offer] == nil }) {
                throw refuse("promotional_offer \(offer.prefix(64)) is not among the offers of \(missing.prefix(128))")
            }
            return .promotionalOffer(offer)
        case (nil, nil):
            if file.billingPlanType != nil { throw refuse("billing_plan_type goes with alternate_product") }
            return .none
        }
    }
}
