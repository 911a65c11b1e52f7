import Foundation

/// A ticket as the intake's GET returns it, read from its `iap:ticket:<id>` hash.
public struct Ticket: Codable, Sendable, Equatable {
    public var ticket: String
    public var status: TicketStatus
    public var reason: String?
    /// What applying a Server Notification did (`revoked`, `refund_remembered`, `unclaimed`, …).
    public var result: String?
    /// The precise cause behind `reason` or the last retry (never a secret or a whole token).
    public var lastError: String?
    public var environment: String?
    public var attempts: Int
    public var transactions: [TicketTransaction]
    public var createdAt: String
    public var updatedAt: String
    /// The client key that submitted it (`IAP_CLIENT_KEYS_FILE`): only that key (or one scoped
    /// `support`) reads it. Never part of the answer.
    public var clientKey: String? = nil

    public struct TicketTransaction: Codable, Sendable, Equatable {
        public var transactionID: String
        public var originalTransactionID: String
        public var productID: String
        public var quantity: Int
        public var outcome: PurchaseOutcome
        public var reason: String?

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
    public init?(id: String, hash: [String: String]) {
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

    public func encoded() -> Data {
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
