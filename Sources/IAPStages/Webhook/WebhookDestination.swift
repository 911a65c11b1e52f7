/// One place the fulfilment events go: a name (its keys and consumer group are its own), the URL,
/// the signing secret and the one being retired, which events it gets, and how many of a
/// worker's slots its POSTs may hold at once.
package struct WebhookDestination: Sendable, Equatable {
    package var name: String
    package var url: String
    package var secret: String
    package var previousSecret: String?
    package var filter: WebhookFilter
    /// At most this many POSTs to it at once in one worker (`max_in_flight`; `nil`: an even share
    /// of the worker's slots), so a destination that hangs holds only its share.
    package var maxInFlight: Int?

    package init(
        name: String, url: String, secret: String, previousSecret: String? = nil, filter: WebhookFilter = .all,
        maxInFlight: Int? = nil
    ) {
        self.name = name
        self.url = url
        self.secret = secret
        self.previousSecret = previousSecret
        self.filter = filter
        self.maxInFlight = maxInFlight
    }

    /// The signer of its deliveries.
    package var signer: WebhookSigner { WebhookSigner(secret: secret, previousSecret: previousSecret) }

    /// A name is `[a-z0-9_-]{1,32}`: it goes into keys and tickets, where a `:` or `@` could make
    /// one destination's key another's.
    package static func isName(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count)
            && text.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// How many POSTs each destination may have at once in a worker of `slots`: its own
    /// `max_in_flight` (at most `slots`), else an even share, at least 1. With one destination, all.
    package static func shares(of destinations: [WebhookDestination], slots: Int) -> [String: Int] {
        let even = max(1, slots / max(1, destinations.count))
        return Dictionary(uniqueKeysWithValues: destinations.map { ($0.name, min(max(1, slots), $0.maxInFlight ?? even)) })
    }
}
