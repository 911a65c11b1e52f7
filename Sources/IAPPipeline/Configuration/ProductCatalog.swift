import AppleReceipt
import Foundation

/// The products an app sells and their types: the type decides what a purchase's grant unit is.
public struct ProductCatalog: Sendable, Equatable {
    public enum ProductType: String, Codable, Sendable {
        case consumable
        case nonConsumable = "non_consumable"
        case autoRenewable = "auto_renewable"
        case nonRenewing = "non_renewing"
    }

    public var products: [String: ProductType]
    /// `daily_limit_per_user`: how many of a product one user is granted in a rolling 24 hours
    /// before the next is held for review; absent: no cap.
    public var dailyLimits: [String: Int]

    public init(products: [String: ProductType], dailyLimits: [String: Int] = [:]) {
        self.products = products
        self.dailyLimits = dailyLimits
    }

    /// Reads `{"products": {"<product_id>": {"type": "consumable" | …, "daily_limit_per_user": N?}}}`.
    public init(json: Data) throws {
        struct File: Decodable {
            struct Entry: Decodable {
                var type: ProductType
                var dailyLimitPerUser: Int?

                enum CodingKeys: String, CodingKey {
                    case type
                    case dailyLimitPerUser = "daily_limit_per_user"
                }
            }
            var products: [String: Entry]
        }
        let file = try JSONDecoder().decode(File.self, from: json)
        if let (product, _) = file.products.first(where: { ($0.value.dailyLimitPerUser ?? 1) < 1 }) {
            throw CatalogError(reason: "\(product): daily_limit_per_user must be at least 1")
        }
        self.init(products: file.products.mapValues(\.type), dailyLimits: file.products.compactMapValues(\.dailyLimitPerUser))
    }

    /// A products file that parses but says something impossible.
    public struct CatalogError: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// What one purchase may be granted as, once ever: `nil` for a product not in the catalog.
    ///
    /// A consumable is granted per transaction; a non-consumable per original transaction (a
    /// restore or another device gets a new transaction id for the same purchase); a subscription
    /// per period (`web_order_line_item_id`, prefixed so it can never meet a transaction id).
    public func grantUnit(for transaction: InAppTransaction) -> String? {
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
