import Foundation

/// A ticket as the intake's GET returns it, read from its `iap:ticket:<id>` hash.
package struct Ticket: Codable, Sendable, Equatable {
    package var ticket: String
    package var status: TicketStatus
    package var reason: String?
    /// What applying a Server Notification did (`revoked`, `refund_remembered`, `unclaimed`, …).
    package var result: String?
    /// The precise cause behind `reason` or the last retry (never a secret or a whole token).
    package var lastError: String?
    package var environment: String?
    package var attempts: Int
    package var transactions: [TicketTransaction]
    package var createdAt: String
    package var updatedAt: String
    /// The client key that submitted it (`IAP_CLIENT_KEYS_FILE`): only that key (or one scoped
    /// `support`) reads it. Never part of the answer.
    package var clientKey: String? = nil

    package struct TicketTransaction: Codable, Sendable, Equatable {
        package var transactionID: String
        package var originalTransactionID: String
        package var productID: String
        package var quantity: Int
        package var outcome: PurchaseOutcome
        package var reason: String?

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id"
            case originalTransactionID = "original_transaction_id"
            case productID = "product_id"
            case quantity, outcome, reason
        }
    }

    enum CodingKeys: String, CodingKey {
        case ticket, status, reason, environment, attempts, transactions
        case lastError = "last_error"
        case result
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    /// Builds the view from a hash; `nil` when the hash is empty or has no valid status.
    package init?(id: String, hash: [String: String]) {
        guard let status = hash["status"].flatMap(TicketStatus.init(rawValue:)) else { return nil }
        ticket = id
        self.status = status
        reason = hash["reason"].flatMap { $0.isEmpty ? nil : $0 }
        result = hash["result"].flatMap { $0.isEmpty ? nil : $0 }
        lastError = hash["last_error"].flatMap { $0.isEmpty ? nil : $0 }
        environment = hash["environment"].flatMap { $0.isEmpty ? nil : $0 }
        attempts = hash["attempts"].flatMap { Int($0) } ?? 0
        transactions = hash["transactions"].flatMap {
            try? JSONDecoder().decode([TicketTransaction].self, from: Data($0.utf8))
        } ?? []
        createdAt = Self.iso8601(hash["created_at"])
        updatedAt = Self.iso8601(hash["updated_at"] ?? hash["created_at"])
        clientKey = hash["client_key"].flatMap { $0.isEmpty ? nil : $0 }
    }

    package func encoded() -> Data {
        canonicalJSON(self)
    }

    static func iso8601(_ milliseconds: String?) -> String {
        iso8601(milliseconds: milliseconds.flatMap { Int64($0) } ?? 0)
    }

    package static func iso8601(milliseconds ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}
