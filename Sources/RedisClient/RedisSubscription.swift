/// A pub/sub subscription on a connection of its own: SUBSCRIBE, then read messages one by one.
public final class RedisSubscription: Sendable {
    private let connection: RedisConnection

    /// Subscribes to `channels`; returns once the server confirmed every one.
    public init(configuration: RedisConfiguration, channels: [String]) async throws {
        connection = RedisConnection(configuration: configuration)
        let replies = try await connection.pipeline([RedisCommand(["SUBSCRIBE"] + channels)])
        var confirmed = 0
        var reply = replies.first
        while true {
            guard let items = reply?.array, items.first?.string == "subscribe" else {
                await connection.close()
                throw RedisError.unexpectedReply("SUBSCRIBE answered \(String(describing: reply))")
            }
            confirmed += 1
            if confirmed == channels.count { break }
            reply = try await connection.readPushed(timeout: connection.configuration.commandTimeout)
        }
    }

    /// The next message as (channel, payload), waiting at most `timeout`; a timeout throws
    /// and ends the subscription.
    public func next(timeout: Duration) async throws -> (channel: String, message: String) {
        while true {
            let reply = try await connection.readPushed(timeout: timeout)
            if let items = reply.array, items.count == 3, items[0].string == "message",
               let channel = items[1].string, let message = items[2].string
            {
                return (channel, message)
            }
        }
    }

    public func close() async {
        await connection.close()
    }
}
