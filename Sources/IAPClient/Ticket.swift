import PlainJSON

/// A submission's ticket as `GET /v1/receipts/{ticket}` answers it.
public struct Ticket: Sendable, Equatable {
    public let id: String
    public let status: TicketStatus
    /// Why it was `rejected` or is `dead` (`bundle_mismatch`, `apple_status_21003`, …).
    public let reason: String?
    /// How a ticket that ended `applied` ended (`apple_account_bound`, `transaction_finished`, …).
    public let result: String?
    public let transactions: [TicketTransaction]
    /// The whole answer, for what this type does not name.
    public let json: JSONValue

    init(_ json: JSONValue) {
        id = json["ticket"]?.string ?? ""
        status = TicketStatus(rawValue: json["status"]?.string ?? "")
        reason = json["reason"]?.string
        result = json["result"]?.string
        transactions = (json["transactions"]?.array ?? []).map(TicketTransaction.init)
        self.json = json
    }

    /// Terminal, or `held` (it waits for an operator, who may take days).
    public var isSettled: Bool { status.isTerminal || status == .held }
}

/// One purchase of a ticket and how it ended for it.
public struct TicketTransaction: Sendable, Equatable {
    public let transactionID: String
    public let productID: String?
    public let quantity: Int?
    /// `granted`, `duplicate`, `rejected` or `held`.
    public let outcome: String
    public let reason: String?

    init(_ json: JSONValue) {
        transactionID = json["transaction_id"]?.string ?? ""
        productID = json["product_id"]?.string
        quantity = json["quantity"]?.int
        outcome = json["outcome"]?.string ?? ""
        reason = json["reason"]?.string
    }
}

/// A ticket's status; a status this version does not name is still carried by its text.
public struct TicketStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let queued = Self(rawValue: "queued")
    public static let verifying = Self(rawValue: "verifying")
    public static let retrying = Self(rawValue: "retrying")
    public static let held = Self(rawValue: "held")
    public static let granted = Self(rawValue: "granted")
    public static let duplicate = Self(rawValue: "duplicate")
    public static let rejected = Self(rawValue: "rejected")
    public static let dead = Self(rawValue: "dead")
    public static let applied = Self(rawValue: "applied")

    public var isTerminal: Bool { [.granted, .duplicate, .rejected, .dead, .applied].contains(self) }
    public var description: String { rawValue }
}

/// What `POST /v1/receipts` (or a sync) answered: the ticket, its status, and whether this
/// request stored it (`202`) or the same evidence had been sent before (`200`, nothing queued).
public struct Submission: Sendable, Equatable {
    public let ticket: String
    public let status: TicketStatus
    public let isNew: Bool
}
