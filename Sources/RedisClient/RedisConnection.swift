import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers
import NIOPosix

/// One hiredis connection with a thread of its own.
///
/// hiredis contexts are not thread-safe and block, so every call runs on this connection's
/// one-thread pool: calls are serialised, and Swift's cooperative pool never blocks on I/O.
/// A context that fails is freed; the next call dials again, with backoff after failed dials.
public final class RedisConnection: RedisCommandSending, @unchecked Sendable {
    public let configuration: RedisConfiguration
    private let thread: NIOThreadPool
    private let isClosed = NIOLockedValueBox(false)

    // Touched only on `thread`.
    private var context: Hiredis.Context?
    private var dialBackoffMs = 0
    private var nextDialAt: UInt64 = 0
    private var lastDialError = ""

    public init(configuration: RedisConfiguration) {
        _ = Self.ignoreSIGPIPE
        self.configuration = configuration
        self.thread = NIOThreadPool(numberOfThreads: 1)
        self.thread.start()
    }

    /// hiredis writes with write(2): a peer that went away must give EPIPE, not kill the process.
    private static let ignoreSIGPIPE: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    deinit {
        if let context { Hiredis.free(context) }
    }

    /// Runs one command. An error reply comes back as `.error`, not thrown; `send` throws it.
    public func execute(_ command: RedisCommand) async throws -> RedisReply {
        try await execute(command, blockingMs: nil)
    }

    /// Runs a blocking command (`BLMOVE … timeout`): the read timeout is stretched past `blockingMs`.
    public func execute(_ command: RedisCommand, blockingMs: Int?) async throws -> RedisReply {
        precondition(!command.arguments.isEmpty, "a Redis command needs a name")
        return try await onThread {
            try self.withReadTimeout(blockingMs.map { $0 + self.configuration.commandTimeoutMs }, what: command.name) {
                Hiredis.command($0, command.arguments)
            }
        }
    }

    /// Sends all commands in one write and reads all replies (error replies inline).
    public func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        if commands.isEmpty { return [] }
        return try await onThread {
            let context = try self.connected()
            for command in commands {
                precondition(!command.arguments.isEmpty, "a Redis command needs a name")
                guard Hiredis.append(context, command.arguments) else { throw self.dropContext(after: "pipeline") }
            }
            var replies: [RedisReply] = []
            replies.reserveCapacity(commands.count)
            for _ in commands {
                guard let reply = Hiredis.readReply(context) else { throw self.dropContext(after: "pipeline") }
                replies.append(reply)
            }
            return replies
        }
    }

    /// Reads the next reply the server pushes (a pub/sub message), waiting at most `timeoutMs`.
    /// A timeout ends the connection, as any hiredis read error does.
    public func readPushed(timeoutMs: Int) async throws -> RedisReply {
        try await onThread {
            try self.withReadTimeout(timeoutMs, what: "read") { Hiredis.readReply($0) }
        }
    }

    /// Runs one hiredis call on the live context, with its timeout set to `timeoutMs` for this call
    /// only (`nil`: the command timeout). A failed call frees the context.
    private func withReadTimeout(
        _ timeoutMs: Int?, what: String, _ call: (Hiredis.Context) -> RedisReply?
    ) throws -> RedisReply {
        let context = try connected()
        if let timeoutMs { Hiredis.setTimeout(context, milliseconds: timeoutMs) }
        guard let reply = call(context) else { throw dropContext(after: what) }
        if timeoutMs != nil { Hiredis.setTimeout(context, milliseconds: configuration.commandTimeoutMs) }
        return reply
    }

    /// Frees the context and stops the thread; later calls throw `.closed`.
    public func close() async {
        let wasClosed = isClosed.withLockedValue { closed in
            defer { closed = true }
            return closed
        }
        if wasClosed { return }
        _ = try? await thread.runIfActive {
            if let context = self.context { Hiredis.free(context) }
            self.context = nil
        }
        try? await thread.shutdownGracefully()
    }

    private func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        if isClosed.withLockedValue({ $0 }) { throw RedisError.closed }
        do {
            return try await thread.runIfActive(body)
        } catch let error as RedisError {
            throw error
        } catch {
            throw RedisError.closed
        }
    }

    private func connected() throws -> Hiredis.Context {
        if let context { return context }
        let now = DispatchTime.now().uptimeNanoseconds
        if now < nextDialAt {
            throw RedisError.connectionFailed("\(lastDialError) (next dial in \((nextDialAt - now) / 1_000_000) ms)")
        }
        switch dial() {
        case .success(let context):
            self.context = context
            dialBackoffMs = 0
            return context
        case .failure(let error):
            let bounds = configuration.reconnectBackoffMs
            dialBackoffMs = min(max(dialBackoffMs * 2, bounds.lowerBound), bounds.upperBound)
            nextDialAt = now + UInt64(dialBackoffMs) * 1_000_000
            lastDialError = "\(error)"
            throw error
        }
    }

    private func dial() -> Result<Hiredis.Context, RedisError> {
        let context: Hiredis.Context
        switch Hiredis.connect(configuration.endpoint, timeoutMs: configuration.connectTimeoutMs) {
        case .success(let dialled): context = dialled
        case .failure(let error): return .failure(error)
        }
        Hiredis.setTimeout(context, milliseconds: configuration.commandTimeoutMs)
        if case .tcp = configuration.endpoint { Hiredis.enableKeepAlive(context) }
        var setup: [(String, [String])] = []
        if let password = configuration.password {
            setup.append(("AUTH", [configuration.username, password].compactMap { $0 }))
        }
        if configuration.database != 0 {
            setup.append(("SELECT", [String(configuration.database)]))
        }
        for (name, arguments) in setup {
            switch Hiredis.command(context, RedisCommand([name] + arguments).arguments) {
            case .error(let message):
                Hiredis.free(context)
                // The message is the server's; the password never reaches it or the logs.
                return .failure(.connectionFailed("\(name) refused: \(message)"))
            case nil:
                let message = Hiredis.errorMessage(context)
                Hiredis.free(context)
                return .failure(.connectionFailed("\(name) failed: \(message)"))
            default:
                continue
            }
        }
        return .success(context)
    }

    private func dropContext(after what: String) -> RedisError {
        guard let context else { return .connectionLost(what) }
        let message = Hiredis.errorMessage(context)
        Hiredis.free(context)
        self.context = nil
        return .connectionLost("\(what): \(message.isEmpty ? "connection closed" : message)")
    }
}
