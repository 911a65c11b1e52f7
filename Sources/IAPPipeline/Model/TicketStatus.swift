/// A ticket's status as clients see it.
public enum TicketStatus: String, Codable, Sendable, CaseIterable {
    case queued, verifying, retrying, granted, duplicate, rejected, dead
    /// A Server Notification's ticket: applied, with what happened in `result`.
    case applied

    /// A terminal ticket never changes again (unless an operator replays a dead one).
    public var isTerminal: Bool {
        switch self {
        case .granted, .duplicate, .rejected, .dead, .applied: return true
        case .queued, .verifying, .retrying: return false
        }
    }
}

/// What happened to one purchase of a ticket.
public enum PurchaseOutcome: String, Codable, Sendable {
    case granted, duplicate, rejected
    /// Not decided yet: the grant stage turns it into granted or duplicate.
    case pending
}
