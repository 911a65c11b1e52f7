/// What can go wrong talking to Redis. Every failure reaches callers as one of these, never a crash.
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not be reached (refused, unresolvable, timed out dialling, or backing off).
    case connectionFailed(String)
    /// The connection broke during a command: whether the server ran it is unknown.
    case connectionLost(String)
    /// The server answered with an error reply (`ERR …`, `NOSCRIPT …`, `WRONGTYPE …`).
    case server(String)
    /// The client was closed.
    case closed
    /// A reply had an unexpected shape.
    case unexpectedReply(String)
    /// A `redis://` or `unix://` address could not be parsed.
    case invalidURL(String)
    /// The command ran on the primary, but fewer replicas than required confirmed it in time: a
    /// failover now could lose it, so it must not be acknowledged (running it again is safe).
    case notReplicated(String)

    public var description: String {
        switch self {
        case .connectionFailed(let why): return "redis connection failed: \(why)"
        case .connectionLost(let why): return "redis connection lost: \(why)"
        case .server(let message): return "redis error: \(message)"
        case .closed: return "redis client closed"
        case .unexpectedReply(let what): return "unexpected redis reply: \(what)"
        case .invalidURL(let why): return "invalid redis url: \(why)"
        case .notReplicated(let what): return "not replicated: \(what)"
        }
    }

    /// Error replies that describe the server's state, not the command: the same command may
    /// succeed later (still loading its data after a restart, out of memory, a failover, …).
    static let transientServerErrors = ["LOADING", "BUSY", "OOM", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS"]

    /// True when trying the same thing again later may succeed.
    public var isTransient: Bool {
        switch self {
        case .connectionFailed, .connectionLost, .notReplicated:
            return true
        case .server(let message):
            // A script's error arrives as "<script name>: <reply>": look at both.
            let reply = message.firstIndex(of: ":").map { message[message.index(after: $0)...].drop { $0 == " " } }
            return Self.transientServerErrors.contains { message.hasPrefix($0) || reply?.hasPrefix($0) == true }
        default:
            return false
        }
    }
}
