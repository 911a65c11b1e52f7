import AppleReceipt
import Foundation
import PipelineCore

/// The products an app sells: each one's type (which decides what a purchase's grant unit is),
/// the entitlements it gives, its subscription group, and the purchase policy's daily cap.
package struct ProductCatalog: Sendable, Equatable {
    package enum ProductType: String, Codable, Sendable {
        case consumable
        case nonConsumable = "non_consumable"
        case autoRenewable = "auto_renewable"
        case nonRenewing = "non_renewing"
    }

    package var products: [String: ProductType]
    /// `daily_limit_per_user`: how many of a product one user is granted in a rolling 24 hours
    /// before the next is held for review; absent: no cap.
    package var dailyLimits: [String: Int]
    /// `entitlements`: what owning the product gives (`premium`, `no_ads`…). Non-consumables give
    /// them for life (until revoked), subscriptions while active; consumables give none.
    package var entitlements: [String: [String]]
    /// `subscription_group` of an auto-renewable product.
    package var subscriptionGroups: [String: String]
    /// `offers` of an auto-renewable product: each promotional offer id the server may
    /// sign (`POST /v1/offers/signatures`) and who may get it.
    package var offers: [String: [String: OfferEligibility]]
    /// `refund_preference`: how a consumption request is answered, by rule (the first that
    /// matches; none: `IAP_REFUND_PREFERENCE`).
    package var refundRules: [RefundRule] = []
    /// `retention`: what Apple's real-time retention request is answered with, by rule (the first
    /// that matches; none: Apple's default message).
    package var retentionRules: [RetentionRule] = []

    /// Who may get an offer: anyone, a lapsed subscriber of the product's group (had it, not active
    /// now), or someone who never had the group.
    package enum OfferEligibility: String, Codable, Sendable, CaseIterable {
        case any, lapsed, new
    }

    package init(
        products: [String: ProductType], dailyLimits: [String: Int] = [:], entitlements: [String: [String]] = [:],
        subscriptionGroups: [String: String] = [:], offers: [String: [String: OfferEligibility]] = [:]
    ) {
        self.products = products
        self.dailyLimits = dailyLimits
        self.entitlements = entitlements
        self.subscriptionGroups = subscriptionGroups
        self.offers = offers
    }

    /// The products of `product`'s subscription group (its `subscription_group`; without one, the
    /// product alone), sorted.
    package func groupProducts(of product: String) -> [String] {
        guard let group = subscriptionGroups[product] else { return [product] }
        return subscriptionGroups.filter { $0.value == group }.map(\.key).sorted()
    }

    /// Reads `{"products": {"<product_id>": {"type": "consumable" | …, "daily_limit_per_user": N?,
    /// "entitlements": ["premium", …]?, "subscription_group": "…"?,
    /// "offers": {"<offer id>": {"eligibility": "any" | "lapsed" | "new"}}?}},
    /// "refund_preference": [rule, …]?, "retention": [rule, …]?}` (`RefundRule`, `RetentionRule`).
    package init(json: Data) throws {
        struct File: Decodable {
            struct Entry: Decodable {
                var type: ProductType
                var dailyLimitPerUser: Int?
                var entitlements: [String]?
                var subscriptionGroup: String?
                var offers: [String: Offer]?

                struct Offer: Decodable {
                    var eligibility: OfferEligibility
                }

                enum CodingKeys: String, CodingKey {
                    case type, entitlements, offers
                    case dailyLimitPerUser = "daily_limit_per_user"
                    case subscriptionGroup = "subscription_group"
                }
            }
            var products: [String: Entry]
        }
        let file = try JSONDecoder().decode(File.self, from: json)
        let members = try JSONSerialization.jsonObject(with: json) as? [String: Any]
        let rules = try RefundRule.rules(members?["refund_preference"])
        for (product, entry) in file.products.sorted(by: { $0.key < $1.key }) {
            if (entry.dailyLimitPerUser ?? 1) < 1 {
                throw CatalogError(reason: "\(product): daily_limit_per_user must be at least 1")
            }
            if entry.type == .consumable && !(entry.entitlements ?? []).isEmpty {
                throw CatalogError(reason: "\(product): a consumable gives no entitlements (it is used up)")
            }
            if let bad = entry.entitlements?.first(where: { !Self.isName($0) }) {
                throw CatalogError(reason: "\(product): entitlement '\(bad)' must be 1 to 64 printable ASCII characters, no comma")
            }
            if entry.subscriptionGroup != nil && entry.type != .autoRenewable {
                throw CatalogError(reason: "\(product): only an auto_renewable product has a subscription_group")
            }
            if let offers = entry.offers, !offers.isEmpty {
                guard entry.type == .autoRenewable else {
                    throw CatalogError(reason: "\(product): only an auto_renewable product has offers")
                }
                if let bad = offers.keys.sorted().first(where: { !Self.isName($0) }) {
                    throw CatalogError(reason: "\(product): offer id '\(bad)' must be 1 to 64 printable ASCII characters, no comma")
                }
            }
        }
        self.init(
            products: file.products.mapValues(\.type), dailyLimits: file.products.compactMapValues(\.dailyLimitPerUser),
            entitlements: file.products.compactMapValues { $0.entitlements.flatMap { $0.isEmpty ? nil : $0 } },
            subscriptionGroups: file.products.compactMapValues(\.subscriptionGroup),
            offers: file.products.compactMapValues { entry in
                entry.offers.flatMap { $0.isEmpty ? nil : $0.mapValues(\.eligibility) }
            })
        refundRules = rules
        retentionRules = try RetentionRule.rules(members?["retention"], catalog: self)
    }

    /// Several apps' catalogs as one (`IAP_APPS_FILE`): a product id two apps both define must be
    /// defined the same (type, cap, entitlements, group, offers), since a purchase is granted by product id.
    package static func merged(_ catalogs: [(name: String, catalog: ProductCatalog)]) throws -> ProductCatalog {
        var merged = ProductCatalog(products: [:])
        var definedBy: [String: String] = [:]
        var rulesBy: String?
        var retentionBy: String?
        for (name, catalog) in catalogs {
            // One set of refund rules for every app: a consumption request is answered by the fleet's notifier.
            if !catalog.refundRules.isEmpty {
                if let first = rulesBy, merged.refundRules != catalog.refundRules {
                    throw CatalogError(reason: "refund_preference differs between \(first) and \(name): give the apps the same rules")
                }
                rulesBy = rulesBy ?? name
                merged.refundRules = catalog.refundRules
            }
            // One set of retention rules too: Apple's real-time request names no app's bundle.
            if !catalog.retentionRules.isEmpty {
                if let first = retentionBy, merged.retentionRules != catalog.retentionRules {
                    throw CatalogError(reason: "retention differs between \(first) and \(name): give the apps the same rules")
                }
                retentionBy = retentionBy ?? name
                merged.retentionRules = catalog.retentionRules
            }
            for (product, type) in catalog.products.sorted(by: { $0.key < $1.key }) {
                if let first = definedBy[product] {
                    guard merged.products[product] == type, merged.dailyLimits[product] == catalog.dailyLimits[product],
                          merged.entitlements[product] == catalog.entitlements[product],
                          merged.subscriptionGroups[product] == catalog.subscriptionGroups[product],
                          merged.offers[product] == catalog.offers[product]
                    else {
                        throw CatalogError(reason: "\(product) is defined differently by \(first) and \(name): give each app its own product ids")
                    }
                    continue
                }
                definedBy[product] = name
                merged.products[product] = type
                merged.dailyLimits[product] = catalog.dailyLimits[product]
                merged.entitlements[product] = catalog.entitlements[product]
                merged.subscriptionGroups[product] = catalog.subscriptionGroups[product]
                merged.offers[product] = catalog.offers[product]
            }
        }
        return merged
    }

    static func isName(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return (1...64).contains(bytes.count) && bytes.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ",") }
    }

    /// A products file that parses but says something impossible.
    package struct CatalogError: Error, CustomStringConvertible {
        package var reason: String
        package var description: String { reason }
    }

    /// What one purchase may be granted as, once ever: `nil` for a product not in the catalog.
    ///
    /// A consumable is granted per transaction; a non-consumable per original transaction (a
    /// restore or another device gets a new transaction id for the same purchase); a subscription
    /// per period (`web_order_line_item_id`, prefixed so it can never meet a transaction id).
    package func grantUnit(for transaction: InAppTransaction) -> String? {
        switch products[transaction.productID] {
        case nil: return nil
        case .consumable: return transaction.transactionID
        case .nonConsumable: return transaction.originalTransactionID
        case .autoRenewable, .nonRenewing:
            if let period = transaction.webOrderLineItemID, !period.isEmpty { return "wol:\(period)" }
            return transaction.transactionID
        }
    }
}
