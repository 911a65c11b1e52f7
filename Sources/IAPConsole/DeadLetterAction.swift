import HTTPTypes
import IAPOperations
import PipelineCore
import RedisClient

/// What may be done to a previewed group of dead letters, confirmed with exactly the entries the
/// preview listed. Each entry is taken off the list by one atomic step (`replay_dead_letter`'s
/// `LREM`, or `LREM` alone), so a second confirmation, or two operators at once, act on each
/// entry once.
enum DeadLetterAction: String, Sendable {
    /// Queue each job again with its attempts reset (the dedupe claim still grants once).
    case replay
    /// Delete the entries for good.
    case purge

    /// Who may: an operator replays, an admin purges.
    var role: ConsoleRole {
        switch self {
        case .replay: .operator
        case .purge: .admin
        }
    }

    struct Outcome: Sendable, Equatable {
        var done = 0
        /// Entries that hold no job to queue (left in place).
        var skipped = 0
        /// Entries gone before this confirmation reached them.
        var missing = 0
    }

    func perform(on entries: [DeadLetterWindow.Entry], bucket: Int, store: PipelineStore, ticketTTL: Duration) async throws -> Outcome {
        var outcome = Outcome()
        switch self {
        case .replay:
            for entry in entries {
                guard entry.letter.flatMap({ try? Job.decode($0.job) }) != nil else {
                    outcome.skipped += 1
                    continue
                }
                if try await store.replay(entry: entry.text, inBucket: bucket, ttl: ticketTTL) { outcome.done += 1 } else { outcome.missing += 1 }
            }
        case .purge:
            guard let key = DeadLetterWindow(store: store).key(bucket: bucket), !entries.isEmpty else { return outcome }
            let replies = try await store.redis.pipeline(entries.map { RedisCommand("LREM", key, "1", $0.text) })
            for reply in replies {
                if try reply.checked().int == 1 { outcome.done += 1 } else { outcome.missing += 1 }
            }
        }
        return outcome
    }

    /// What the operator is told: a confirmation that found nothing left to act on is a `409`.
    func said(_ outcome: Outcome, named: Int) -> (status: HTTPResponse.Status, text: String) {
        let verb = self == .replay ? "replayed" : "purged"
        if outcome.done == 0 && outcome.skipped == 0 {
            return (.conflict, "Nothing \(verb): the \(named) dead letters previewed were replayed or purged before.")
        }
        var text = "\(verb.prefix(1).uppercased() + verb.dropFirst()) \(outcome.done) of the \(named) dead letters previewed."
        if outcome.missing > 0 { text += " \(outcome.missing) were gone before (replayed or purged by someone else)." }
        if outcome.skipped > 0 { text += " \(outcome.skipped) hold no job to queue and stay listed." }
        return (.ok, text)
    }
}
