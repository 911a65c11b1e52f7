/// Runs `event` against `deadline`: `true` when it answers `true` first; `false` when the deadline
/// comes first (or it answers `false`). The loser is cancelled.
package func before(_ deadline: ContinuousClock.Instant, _ event: @escaping @Sendable () async -> Bool) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask { await event() }
        group.addTask {
            try? await Task.sleep(until: deadline)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}
