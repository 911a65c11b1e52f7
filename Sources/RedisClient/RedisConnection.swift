import Metrics
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// One Redis connection on a SwiftNIO event loop, many commands in flight at once.
///
/// hiredis is the wire codec (its formatter encodes, its reader parses); the socket is NIO's, so
/// no thread waits on it. Replies come back in the order the commands were sent. A connection
/// that fails is dropped; the next call dials again, with backoff after failed dials.
public final class RedisConnection: RedisCommandSending, Sendable {
    public let configuration: RedisConfiguration
    private let group: any EventLoopGroup
    private let state = NIOLockedValueBox(State())
    /// With `configuration.tls`: the TLS context every dial uses (its files read once), or why
    /// it could not be made (then every dial fails with that).
    private let tls: Result<NIOSSLContext, RedisError>?

    private struct State {
        var isClosed = false
        var link: Link?
        var dialing: EventLoopFuture<Link>?
        var dialBackoff: Duration = .zero
        var nextDialAt = NIODeadline.uptimeNanoseconds(0)
        var lastDialError = ""
        /// Whether a dial ever succeeded: the next successful one is a reconnect.
        var everConnected = false
    }

    /// An open channel and its protocol handler, which is touched on the channel's event loop only.
    private struct Link: Sendable {
        let channel: any Channel
        let handler: NIOLoopBound<RedisChannelHandler>
    }

    /// - Parameter eventLoopGroup: where the socket lives; the process-wide NIO group by default.
    public init(configuration: RedisConfiguration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.group = eventLoopGroup
        tls = configuration.tls.map(Self.context)
    }

    /// Why TLS as `tls` says cannot be set up (a file that does not load), or `nil`.
    public static func problem(with tls: RedisConfiguration.TLS) -> String? {
        if case .failure(let error) = context(tls) { return "\(error)" }
        return nil
    }

    /// The TLS contexts made so far, one per settings: a connection dialled anew (a sentinel's
    /// short one at every dial, a cluster node's) reads no file.
    private static let contexts = NIOLockedValueBox<[RedisConfiguration.TLS: NIOSSLContext]>([:])

    /// The client side of TLS as `tls` says: full verification always (the chain to a trusted
    /// root, and the server's name or address).
    static func context(_ tls: RedisConfiguration.TLS) -> Result<NIOSSLContext, RedisError> {
        if let made = contexts.withLockedValue({ $0[tls] }) { return .success(made) }
        do {
            var settings = TLSConfiguration.makeClientConfiguration()
            settings.certificateVerification = .fullVerification
            if let caFile = tls.caFile { settings.trustRoots = .file(caFile) }
            if let certificateFile = tls.certificateFile, let keyFile = tls.keyFile {
                settings.certificateChain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) }
                settings.privateKey = .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
            }
            let made = try NIOSSLContext(configuration: settings)
            contexts.withLockedValue { $0[tls] = made }
            return .success(made)
        } catch {
            return .failure(.connectionFailed("TLS cannot be set up: \(error)"))
        }
    }

    /// True while the socket is open.
    public var isConnected: Bool {
        state.withLockedValue { $0.link?.channel.isActive ?? false }
    }

    /// Runs one command. An error reply comes back as `.error`, not thrown; `send` throws it.
    public func execute(_ command: RedisCommand) async throws -> RedisReply {
        try await execute(command, blocking: nil)
    }

    /// Runs a blocking command (`BLMOVE … timeout`): the reply may take `blocking` longer than
    /// the command timeout.
    public func execute(_ command: RedisCommand, blocking: Duration?) async throws -> RedisReply {
        let replies = try await send([command], timeout: .init(configuration.commandTimeout + (blocking ?? .zero)))
        return replies[0]
    }

    /// Sends all commands in one write and returns all replies (error replies inline).
    public func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        if commands.isEmpty { return [] }
        return try await send(commands, timeout: .init(configuration.commandTimeout))
    }

    /// The next reply the server pushes (a pub/sub message), waiting at most `timeout`.
    /// A timeout ends the connection.
    public func readPushed(timeout: Duration) async throws -> RedisReply {
        let channel = try await liveLink().channel
        let promise = channel.eventLoop.makePromise(of: RedisReply.self)
        channel.writeAndFlush(RedisOutbound.awaitPushed(timeout: .init(timeout), promise: promise)).whenFailure {
            promise.fail(Self.lost($0))
        }
        return try await promise.futureResult.get()
    }

    /// Closes the socket; later calls throw `.closed`.
    public func close() async {
        let channel: (any Channel)? = state.withLockedValue { state in
            state.isClosed = true
            defer { state.link = nil }
            return state.link?.channel
        }
        try? await channel?.close()
    }

    private func send(_ commands: [RedisCommand], timeout: TimeAmount) async throws -> [RedisReply] {
        let link = try await liveLink()
        let channel = link.channel
        var encoded = channel.allocator.buffer(capacity: 256)
        for command in commands { command.encode(into: &encoded) }
        let buffer = encoded
        let count = commands.count
        let promise = channel.eventLoop.makePromise(of: [RedisReply].self)
        if channel.eventLoop.inEventLoop {
            link.handler.value.send(buffer, count: count, timeout: timeout, promise: promise)
        } else {
            channel.eventLoop.execute { link.handler.value.send(buffer, count: count, timeout: timeout, promise: promise) }
        }
        let replies = try await promise.futureResult.get()
        if replies.contains(where: Self.saysNotPrimary) { drop(channel) }
        return replies
    }

    /// Forgets `channel` (if it is still this connection's) and closes it: the next call dials again.
    private func drop(_ channel: any Channel) {
        state.withLockedValue { state in
            if let current = state.link?.channel, current === channel { state.link = nil }
        }
        channel.close(promise: nil)
    }

    private static func lost(_ error: any Error) -> RedisError {
        error as? RedisError ?? .connectionLost("\(error)")
    }

    private enum Next {
        case ready(Link)
        case wait(EventLoopFuture<Link>)
        case dial(EventLoopPromise<Link>)
    }

    /// The open channel, or one being dialled (one dial at a time, however many callers wait).
    private func liveLink() async throws -> Link {
        let next: Next = try state.withLockedValue { state throws(RedisError) in
            if state.isClosed { throw .closed }
            if let link = state.link, link.channel.isActive { return .ready(link) }
            state.link = nil
            if let dialing = state.dialing { return .wait(dialing) }
            let now = NIODeadline.now()
            if now < state.nextDialAt {
                let waitMs = (state.nextDialAt - now).nanoseconds / 1_000_000
                throw .connectionFailed("\(state.lastDialError) (next dial in \(waitMs) ms)")
            }
            // Dialled outside the lock: the dial's own callbacks take it.
            let promise = group.next().makePromise(of: Link.self)
            state.dialing = promise.futureResult
            return .dial(promise)
        }
        let dialing: EventLoopFuture<Link>
        switch next {
        case .ready(let link):
            return link
        case .wait(let future):
            dialing = future
        case .dial(let promise):
            dial().cascade(to: promise)
            dialing = promise.futureResult
        }
        do {
            return try await dialing.get()
        } catch let error as RedisError {
            throw error
        } catch {
            throw RedisError.connectionFailed("\(error)")
        }
    }

    /// Connects, authenticates and selects the database; records the outcome for later callers.
    private func dial() -> EventLoopFuture<Link> {
        let configuration = configuration
        let group = group
        let connecting: EventLoopFuture<any Channel>
        switch configuration.endpoint {
        case .tcp(let host, let port):
            connecting = self.bootstrap(host: host).connect(host: host, port: port)
        case .unix(let path):
            connecting = self.bootstrap(host: nil).connect(unixDomainSocketPath: path)
        case .cluster(let seeds):
            if let slot = configuration.clusterSlot {
                connecting = group.next().makeFutureWithTask {
                    try await RedisClusterRouter.primary(ofSlot: slot, configuration: configuration, seeds: seeds)
                }.flatMap { owner in
                    self.bootstrap(host: owner.host).connect(host: owner.host, port: owner.port)
                }
            } else {
                connecting = self.bootstrap(host: seeds[0].host).connect(host: seeds[0].host, port: seeds[0].port)
            }
        case .sentinel(let sentinels):
            // Asked at every dial: after a failover the next dial finds the new primary.
            connecting = group.next().makeFutureWithTask {
                try await Self.primary(of: sentinels.master, from: sentinels.addresses, configuration: configuration, group: group)
            }.flatMap { primary in
                self.bootstrap(host: primary.host).connect(host: primary.host, port: primary.port)
            }
        }
        let ready = connecting
            .flatMapErrorThrowing { throw RedisError.connectionFailed("\($0)") }
            .flatMap { channel in Self.setUp(channel, configuration: configuration).flatMapThrowing(Self.link) }
        ready.whenComplete { result in
            self.state.withLockedValue { state in
                state.dialing = nil
                switch result {
                case .success(let link):
                    RedisMetrics.connected(again: state.everConnected)
                    state.everConnected = true
                    state.dialBackoff = .zero
                    if state.isClosed {
                        link.channel.close(promise: nil)
                    } else {
                        state.link = link
                    }
                case .failure(let error):
                    RedisMetrics.dialFailed()
                    let bounds = configuration.reconnectBackoff
                    state.dialBackoff = min(max(state.dialBackoff * 2, bounds.lowerBound), bounds.upperBound)
                    state.nextDialAt = .now() + .init(state.dialBackoff)
                    state.lastDialError = "\(Self.failed(error))"
                }
            }
        }
        return ready.flatMapErrorThrowing { throw Self.failed($0) }
    }

    /// The channel and its handler, found on the channel's event loop (setUp's future is the
    /// channel's): a channel whose handler cannot be found is closed.
    private static func link(_ channel: any Channel) throws -> Link {
        do {
            let handler = try channel.pipeline.syncOperations.handler(type: RedisChannelHandler.self)
            return Link(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop))
        } catch {
            channel.close(promise: nil)
            throw error
        }
    }

    /// `host`: the server's name or address over TCP (checked against its certificate over TLS);
    /// `nil` for a Unix socket.
    private func bootstrap(host: String?) -> ClientBootstrap {
        let tls = host == nil ? nil : self.tls
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.init(configuration.connectTimeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        // A name is checked against the certificate's DNS names (and sent as SNI);
                        // an address against its IP addresses.
                        let name = host.flatMap { Self.isAddress($0) ? nil : $0 }
                        let handler = try NIOSSLClientHandler(context: try tls.get(), serverHostname: name)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    try channel.pipeline.syncOperations.addHandler(RedisChannelHandler())
                }
            }
        guard host != nil else { return bootstrap }
        return bootstrap
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.socketOption(.so_keepalive), value: 1)
    }

    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    static func isAddress(_ host: String) -> Bool {
        host.contains(":") || (host.split(separator: ".").count == 4 && host.allSatisfy { $0 == "." || $0.isNumber })
    }

    private static func failed(_ error: any Error) -> RedisError {
        switch error {
        case let error as RedisError:
            if case .connectionFailed = error { return error }
            return .connectionFailed("\(error)")
        default:
            return .connectionFailed("\(error)")
        }
    }

    /// AUTH and SELECT, pipelined, before anyone else may use the channel.
    private static func setUp(_ channel: any Channel, configuration: RedisConfiguration) -> EventLoopFuture<any Channel> {
        var commands: [RedisCommand] = []
        if let password = configuration.password {
            commands.append(RedisCommand(["AUTH"] + [configuration.username, password].compactMap { $0 }))
        }
        if configuration.database != 0 {
            commands.append(RedisCommand("SELECT", String(configuration.database)))
        }
        // What a sentinel named may have been demoted since: only a primary is used.
        if case .sentinel = configuration.endpoint { commands.append(RedisCommand("ROLE")) }
        if commands.isEmpty { return channel.eventLoop.makeSucceededFuture(channel) }
        var buffer = channel.allocator.buffer(capacity: 64)
        for command in commands { command.encode(into: &buffer) }
        let names = commands.map(\.name)
        let promise = channel.eventLoop.makePromise(of: [RedisReply].self)
        let timeout = TimeAmount(configuration.commandTimeout)
        channel.writeAndFlush(RedisOutbound.commands(buffer, count: commands.count, timeout: timeout, promise: promise))
            .whenFailure { promise.fail(lost($0)) }
        return promise.futureResult.flatMapThrowing { replies in
            for (name, reply) in zip(names, replies) {
                // The message is the server's; the password never reaches it or the logs.
                if case .error(let message) = reply { throw RedisError.connectionFailed("\(name) refused: \(message)") }
                if name == "ROLE", reply.array?.first?.string != "master" {
                    throw RedisError.connectionFailed("the server the sentinels named is not a primary (ROLE \(reply.array?.first?.string ?? "?"))")
                }
            }
            return channel
        }.flatMapError { error in
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(failed(error))
        }
    }
}
