import NIOCore

extension RedisConnection {
    /// The primary's address as the first sentinel that answers knows it. Each sentinel is asked on
    /// a short-lived connection of its own; one that is down or does not know `master` is skipped.
    static func primary(
        of master: String, from sentinels: [RedisConfiguration.Address], configuration: RedisConfiguration,
        group: any EventLoopGroup
    ) async throws -> RedisConfiguration.Address {
        var refusals: [String] = []
        for sentinel in sentinels {
            var asked = RedisConfiguration(
                endpoint: .tcp(host: sentinel.host, port: sentinel.port), password: configuration.sentinelPassword, connectTimeout: configuration.connectTimeout,
                commandTimeout: configuration.connectTimeout)
            asked.tls = configuration.tls
            let connection = RedisConnection(configuration: asked, eventLoopGroup: group)
            let answer: Result<RedisReply, any Error>
            do {
                answer = .success(try await connection.execute(RedisCommand("SENTINEL", "get-master-addr-by-name", master)))
            } catch {
                answer = .failure(error)
            }
            await connection.close()
            switch answer {
            case .success(let reply):
                if let parts = reply.array, parts.count == 2, let host = parts[0].string,
                   let port = parts[1].string.flatMap(Int.init), (1...65535).contains(port)
                {
                    return .init(host: host, port: port)
                }
                refusals.append("\(sentinel) does not know '\(master)' (\(reply))")
            case .failure(let error):
                refusals.append("\(sentinel): \(error)")
            }
        }
        throw RedisError.connectionFailed("no sentinel names the primary '\(master)': \(refusals.joined(separator: "; "))")
    }

    /// Whether a reply says the server it came from is no longer the primary (or, on a cluster, no
    /// longer serves the slot): the connection is then dropped, so the next call asks the
    /// sentinels, or the cluster's map, again.
    static func saysNotPrimary(_ reply: RedisReply) -> Bool {
        guard case .error(let message) = reply else { return false }
        return message.hasPrefix("READONLY") || message.hasPrefix("MASTERDOWN") || message.hasPrefix("MOVED")
    }
}
