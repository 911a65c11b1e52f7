import Foundation
import IAPStages
import PlainJSON

/// One line of an import (`iapctl adopt import`): a purchase the studio's old system granted, as
/// NDJSON (`{"user_id": …}`) or CSV under a header naming the columns: `user_id`,
/// `original_transaction_id`, `transaction_id` (optional: the original's), `product_id`,
/// `purchase_date` (ISO 8601), `quantity` (optional: 1), `environment` (optional: Production).
package struct ImportRow: Sendable, Equatable {
    package var userID: String
    package var originalTransactionID: String
    package var transactionID: String
    package var productID: String
    /// ms since 1970.
    package var purchaseDate: Int64
    package var quantity: Int
    package var environment: String
    package var kind: ProductCatalog.ProductType
    /// Its grant unit, as the catalog makes it: a consumable's transaction, a non-consumable's
    /// original transaction; a subscription's original transaction (its owner; its periods' units are Apple's).
    package var unit: String

    static let columns = ["user_id", "original_transaction_id", "transaction_id", "product_id", "purchase_date", "quantity", "environment"]

    /// A row from its named fields; the error says what is wrong, for the line's report.
    init(fields: [String: String], catalog: ProductCatalog) throws(ImportRowError) {
        func required(_ name: String) throws(ImportRowError) -> String {
            guard let value = fields[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { throw ImportRowError("\(name) is missing") }
            guard Self.isPrintable(value) else { throw ImportRowError("\(name) must be 1 to 128 printable ASCII characters") }
            return value
        }
        func optional(_ name: String) throws(ImportRowError) -> String? {
            guard let value = fields[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return try required(name)
        }
        userID = try required("user_id")
        originalTransactionID = try required("original_transaction_id")
        transactionID = try optional("transaction_id") ?? originalTransactionID
        productID = try required("product_id")
        guard let kind = catalog.products[productID] else { throw ImportRowError("product_id \(productID) is not in the catalog") }
        self.kind = kind
        let date = try required("purchase_date")
        guard let ms = Adoption.parse(date) else { throw ImportRowError("purchase_date is not an ISO 8601 time (like 2025-06-01T12:00:00Z)") }
        purchaseDate = ms
        let count = try optional("quantity") ?? "1"
        guard let quantity = Int(count), (1...1_000_000).contains(quantity) else { throw ImportRowError("quantity must be a whole number from 1") }
        self.quantity = quantity
        environment = try optional("environment") ?? "Production"
        guard ["Production", "Sandbox"].contains(environment) else { throw ImportRowError("environment must be Production or Sandbox") }
        switch kind {
        case .consumable, .nonRenewing: unit = transactionID
        case .nonConsumable, .autoRenewable: unit = originalTransactionID
        }
    }

    /// A line of NDJSON: one object of strings (numbers taken as written).
    static func fields(json line: String) throws(ImportRowError) -> [String: String] {
        guard let value = try? JSONValue(parsing: Array(line.utf8)), let members = value.object else {
            throw ImportRowError("not a JSON object")
        }
        var fields: [String: String] = [:]
        for (name, member) in members {
            if let text = member.string {
                fields[name] = text
            } else if let number = member.int64 {
                fields[name] = String(number)
            } else if member != .null {
                throw ImportRowError("\(name) must be a string")
            }
        }
        return fields
    }

    /// A CSV line's cells (RFC 4180: a cell in double quotes may hold commas and `""`).
    static func cells(csv line: String) throws(ImportRowError) -> [String] {
        var cells: [String] = [], cell = "", quoted = false, wasQuoted = false
        var characters = Array(line)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" { cell.append("\""); characters.removeFirst() } else { quoted = false }
                } else {
                    cell.append(character)
                }
            } else if character == "," {
                cells.append(cell)
                cell = ""
                wasQuoted = false
            } else if character == "\"" && cell.isEmpty && !wasQuoted {
                quoted = true
                wasQuoted = true
            } else {
                cell.append(character)
            }
        }
        if quoted { throw ImportRowError("a quoted cell is not closed") }
        cells.append(cell)
        return cells
    }

    static func isPrintable(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count) && text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }
}

/// Why a line was not imported.
package struct ImportRowError: Error, Equatable, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
