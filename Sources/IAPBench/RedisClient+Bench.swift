import RedisClient

/// What the bench's phases read of Redis between their windows.
extension RedisClient {
    /// An integer reply (`LLEN`, `XLEN`, `ZCARD`…).
    func integer(_ arguments: String...) async throws -> Int {
        guard let value = try await send(RedisCommand(arguments)).int else { throw BenchError("\(arguments[0]) gave no integer") }
        return Int(value)
    }

    /// Calls per command so far (`INFO commandstats`).
    func commandStats() async throws -> CommandStats {
        CommandStats(info: try await send("INFO", "commandstats").string ?? "")
    }
}
