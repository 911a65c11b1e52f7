/// The jobs a worker's handlers hold now, each under a number of its own: taking one in and
/// letting one go hash an `Int`, not the payload (4 KB for a verify job, hashed twice a job when
/// this was keyed by payload). Only the orphan check, every few seconds, looks at the payloads.
struct JobsInHand: Sendable {
    private var payloads: [Int: String] = [:]
    private var nextID = 0

    /// How many jobs are in hand.
    var count: Int { payloads.count }

    /// Takes a job in; the number lets it go.
    mutating func take(_ payload: String) -> Int {
        nextID &+= 1
        payloads[nextID] = payload
        return nextID
    }

    mutating func letGo(_ id: Int) {
        payloads[id] = nil
    }

    /// How many of each payload are in hand (a payload can be in a list twice).
    func countsByPayload() -> [String: Int] {
        var counts: [String: Int] = [:]
        for payload in payloads.values { counts[payload, default: 0] += 1 }
        return counts
    }
}
