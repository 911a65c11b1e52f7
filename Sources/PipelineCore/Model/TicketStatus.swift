/// A ticket's status as clients see it.
package enum TicketStatus: String, Codable, Sendable, CaseIterable {
    case queued, verifying, retrying, granted, duplicate, rejected, dead
    /// A purchase of the ticket waits for an operator (the dedupe stage's policy held it); it
    /// becomes `granted` or `rejected` when the last held purchase is released or rejected.
    case held
    /// A Server Notification's ticket: applied, with what happened in `result`.
    case applied

    /// A terminal ticket never changes again (unless an operator replays a dead one).
    package var isTerminal: Bool {
        switch self {
        case .granted, .duplicate, .rejected, .dead, .applied: return true
        case .queued, .verifying, .retrying, .held: return false
        }
    }
}

/// What happened to one purchase of a ticket.
package enum PurchaseOutcome: String, Codable, Sendable {
    case granted, duplicate, rejected
    /// Made before its app's cutover (`IAP_ADOPTED_AT`) and unknown to the books: recorded and
    /// owned as granted, but granted before, by the studio's old system (event `adopted`).
    case adopted
    /// Not decided yet: the grant stage turns it into granted, duplicate or held.
    case pending
    /// Claimed, but kept from its grant by a policy rule (`reason`) until an operator releases or
    /// rejects it (`iapctl held`).
    case held
}
