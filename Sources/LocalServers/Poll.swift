/// Polls `probe` every 50 ms until it finds something, for at most `within`: for states that
/// publish no event to await (a server's first PING, a replica's sync, a sentinel's choice of
/// primary). `giveUp` is asked after each miss and may throw to stop early (a child that exited).
public func poll<Found: Sendable>(
    _ what: String, within limit: Duration = .seconds(60), giveUp: () throws -> Void = {},
    _ probe: () async throws -> Found?
) async throws -> Found {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if let found = try await probe() { return found }
        try giveUp()
        try await Task.sleep(for: .milliseconds(50))
    }
    throw LocalServerError("timed out waiting until \(what)")
}
