/// What kind of submission a drill receipt is; it dictates the ticket's terminal state.
package enum ReceiptScenario: String, CaseIterable, Sendable {
    /// A new consumable purchase: granted.
    case valid
    /// A new purchase only the sandbox knows (production answers 21007): granted.
    case sandbox
    /// Another user's receipt carrying an earlier purchase's transaction: one of them is granted.
    case duplicate
    /// A new non-consumable purchase: granted.
    case nonConsumable = "non-consumable"
    /// A restore: new transaction id, an earlier non-consumable's original id: one of them is granted.
    case restored
    /// Apple fails twice (HTTP 503 or status 21005), then answers valid: granted.
    case transient
    /// Apple says 21003: rejected.
    case invalid
    /// The same user sends the same receipt again: the same ticket.
    case resubmitted
    /// A new consumable sent as a StoreKit 2 signed transaction: granted.
    case signed
    /// A new consumable sent as its transaction id alone (App Store Server API lookup): granted.
    case lookup
    /// A StoreKit 2 purchase Apple refunds; the REFUND notification comes 1–3 times, before the
    /// submission or after it: granted then revoked once, or never granted.
    case refunded
    /// A consumable capped at 2 a day per user (`daily_limit_per_user`), bought by a few players
    /// many times: each player's first 2 are granted, the rest held by the purchase policy, then
    /// released by the drill once the trial drains: every one granted once.
    case capped

    /// Relative frequency in a trial's mix.
    var weight: Int {
        switch self {
        case .valid: 30
        case .sandbox: 10
        case .duplicate: 10
        case .nonConsumable: 10
        case .restored: 10
        case .transient: 12
        case .invalid: 8
        case .resubmitted: 10
        case .signed: 10
        case .lookup: 6
        case .refunded: 6
        case .capped: 8
        }
    }
}
