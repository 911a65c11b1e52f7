import LocalServers
import RedisClient

/// Polls `condition` until it holds, for at most `within`: for states that publish no event to
/// await (a replica's sync, a sentinel's choice of primary).
public func until(
    _ what: String, within: Duration = .seconds(60), _ condition: () async throws -> Bool
) async throws {
    do {
        _ = try await poll(what, within: within) { try await condition() ? true : nil }
    } catch let error as LocalServerError {
        throw TestSupportError(error.description)
    }
}

/// One command on a connection of its own to the server on `port` (a sentinel's too), its reply
/// as text: strings and integers, arrays flattened one item per line.
public func directReply(port: Int, _ arguments: String...) async throws -> String {
    try await directReply(port: port, arguments)
}

public func directReply(port: Int, _ arguments: [String]) async throws -> String {
    let connection = RedisConnection(configuration: .init(endpoint: .tcp(host: "127.0.0.1", port: port)))
    let reply: RedisReply
    do {
        reply = try await connection.execute(RedisCommand(arguments))
    } catch {
        await connection.close()
        throw error
    }
    await connection.close()
    return text(of: reply)
}

private func text(of reply: RedisReply) -> String {
    if case .array(let items) = reply { return items.map(text(of:)).joined(separator: "\n") }
    return reply.string ?? reply.int.map(String.init) ?? ""
}
