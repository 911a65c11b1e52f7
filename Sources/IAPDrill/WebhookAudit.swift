import Foundation
import PipelineCore
import IAPOperations
import RedisClient

/// The drill's books on webhook deliveries, per destination: every fulfilment entry its filter
/// admits reached its receiver (at least once, under its event id), and no other, with a valid
/// signature, each user's in stream order (with several buckets, in each bucket's stream order:
/// the promise is per bucket, so per purchase).
struct WebhookAudit {
    let store: PipelineStore
    let lease: Duration

    struct Books {
        var delivered = 0
        var redelivered = 0
        var refused = 0
        var lost = 0
        var wrong = 0
        var findings: [String] = []

        mutating func note(_ finding: String) {
            if findings.count < 4 { findings.append(finding) }
        }
    }

    /// The stream's entries that `sink`'s filter admits: id and user, in order.
    func entries(for sink: WebhookSink) async throws -> [(id: String, user: String, bucket: Int)] {
        try await store.fulfilmentEntries().filter { sink.filter.admits($0.fields) }.map { entry in
            let user = entry.fields["user_id"] ?? "_"
            return (entry.eventID, user.isEmpty ? "_" : user, entry.bucket)
        }
    }

    /// Waits (at most `timeout`) until every entry was accepted and no delivery job is left.
    func settle(_ sink: WebhookSink, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let all = try? await entries(for: sink), all.allSatisfy({ sink.snapshot.accepted[$0.id, default: 0] > 0 }),
               let stats = try? await store.stats(lease: lease), TrialAudit.leftovers(stats) == 0,
               let busy = try? await store.redis.pipeline(
                   store.keys.everyBucket.map { RedisCommand("SCARD", $0.webhookBusy(to: sink.name)) }),
               busy.allSatisfy({ $0.int == 0 })
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    func check(_ sink: WebhookSink) async throws -> Books {
        var books = Books()
        let state = sink.snapshot
        let all = try await entries(for: sink)
        for entry in all where state.accepted[entry.id, default: 0] == 0 {
            books.lost += 1
            books.note("lost: fulfilment entry \(entry.id) of \(entry.user) never reached the webhook \(sink.name)")
        }
        // What its filter turns away never reaches it.
        let admitted = Set(all.map(\.id))
        let strays = state.accepted.keys.filter { !admitted.contains($0) }
        if !strays.isEmpty {
            books.wrong += 1
            books.note("wrong: \(sink.name) got \(strays.count) events its filter turns away (\(strays.sorted().prefix(3).joined(separator: ", ")))")
        }
        // A user marked busy has a delivery job somewhere; one left marked once everything
        // settled has none (a step cut in two), and their events wait for ever.
        for keys in store.keys.everyBucket {
            let busy = try await store.redis.send("SMEMBERS", keys.webhookBusy(to: sink.name)).array?.compactMap(\.string) ?? []
            if !busy.isEmpty { books.note("still marked busy with events to deliver to \(sink.name): \(busy.prefix(5).joined(separator: ", "))") }
        }
        books.delivered = all.filter { state.accepted[$0.id, default: 0] > 0 }.count
        books.redelivered = state.accepted.values.reduce(0) { $0 + max($1 - 1, 0) }
        books.refused = state.refused
        if state.badSignatures > 0 {
            books.wrong += 1
            books.note("wrong: \(state.badSignatures) deliveries to \(sink.name) with a bad signature")
        }
        // A user's events of one bucket, in that bucket's stream order (all of them with one bucket).
        for entries in Dictionary(grouping: all, by: { "\($0.user) \($0.bucket)" }).values {
            let user = entries[0].user
            let ids = entries.map(\.id)
            let delivered = state.order[user] ?? []
            let expected = ids.filter { delivered.contains($0) }
            if delivered.filter({ ids.contains($0) }) != expected {
                books.wrong += 1
                books.note("wrong: \(user)'s events reached the webhook \(sink.name) out of stream order (bucket \(entries[0].bucket))")
            }
        }
        return books
    }
}
