import AppleReceipt
import Foundation

/// A job as it sits in a queue: JSON, one per ticket. Its exact bytes identify it in in-flight
/// lists, so a job is re-encoded only when it moves on.
public struct Job: Codable, Sendable, Equatable {
    public var ticket: String
    public var stage: Stage
    public var userID: String
    /// The base64 receipt; dropped once verified, later stages do not need it.
    public var receiptData: String?
    /// What the client says it bought, if it said.
    public var productID: String?
    public var transactionID: String?
    /// Verification attempts made so far.
    public var attempts: Int
    public var enqueuedAt: Int64
    /// Set by the verify stage.
    public var receipt: VerifiedReceipt?
    /// Set by the dedupe stage.
    public var purchases: [Purchase]?

    public init(
        ticket: String, userID: String, receiptData: String, productID: String?, transactionID: String?,
        enqueuedAt: Int64
    ) {
        self.ticket = ticket
        self.stage = .verify
        self.userID = userID
        self.receiptData = receiptData
        self.productID = productID
        self.transactionID = transactionID
        self.attempts = 0
        self.enqueuedAt = enqueuedAt
    }

    enum CodingKeys: String, CodingKey {
        case ticket, stage
        case userID = "user_id"
        case receiptData = "receipt_data"
        case productID = "product_id"
        case transactionID = "transaction_id"
        case attempts
        case enqueuedAt = "enqueued_at"
        case receipt, purchases
    }

    public func encoded() -> String {
        String(decoding: canonicalJSON(self), as: UTF8.self)
    }

    public static func decode(_ payload: String) throws -> Job {
        try JSONDecoder().decode(Job.self, from: Data(payload.utf8))
    }
}
