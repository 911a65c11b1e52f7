/// A pub/sub subscription on a connection of its own: SUBSCRIBE (or, `sharded`, SSUBSCRIBE), then
/// read messages one by one.
///
/// On Redis Cluster it is always sharded pub/sub: `SSUBSCRIBE` on the primary that serves the
/// channels' slot (they must share one, by a hash tag), which `SPUBLISH` reaches without
/// broadcasting to every node. When that slot moves or its primary changes, the server ends the
/// subscription (`sunsubscribe`) and `next` throws `connectionLost`: subscribe again, the new owner
/// is found. On one server, sharded pub/sub is a namespace of its own: `SPUBLISH` reaches `SSUBSCRIBE`.
public final class RedisSubscription: Sendable {
    private let connection: RedisConnection
    private let sharded: Bool

    /// Subscribes to `channels`; returns once the server confirmed every one.
    public init(configuration: RedisConfiguration, channels: [String], sharded: Bool = false) async throws {
        if case .cluster(let seeds) = configuration.endpoint {
            let slots = Set(channels.map { RedisClusterSlot.of($0) })
            guard slots.count == 1, let slot = slots.first else {
                throw RedisError.server("CROSSSLOT a sharded subscription's channels must share one slot (a hash tag)")
            }
            let owner = try await RedisClusterRouter.primary(ofSlot: slot, configuration: configuration, seeds: seeds)
            connection = RedisConnection(configuration: RedisClusterRouter.nodeConfiguration(owner, of: configuration))
            self.sharded = true
        } else {
            connection = RedisConnection(configuration: configuration)
            self.sharded = sharded
        }
        let verb = self.sharded ? "ssubscribe" : "subscribe"
        let replies = try await connection.pipeline([RedisCommand([verb.uppercased()] + channels)])
        var confirmed = 0
        var reply = replies.first
        while true {
            guard let items = reply?.array, items.first?.string == verb else {
                await connection.close()
                throw RedisError.unexpectedReply("\(verb.uppercased()) answered \(String(describing: reply))")
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
            guard let items = reply.array, let kind = items.first?.string else { continue }
            if items.count == 3, kind == (sharded ? "smessage" : "message"), let channel = items[1].string, let message = items[2].string {
                return (channel, message)
            }
            if sharded, kind == "sunsubscribe" {
                // The server dropped the subscription (on a cluster: the slot moved).
                await connection.close()
                throw RedisError.connectionLost("the shard channel's slot moved or its primary changed: subscribe again")
            }
        }
    }

    public func close() async {
        await connection.close()
    }
}
