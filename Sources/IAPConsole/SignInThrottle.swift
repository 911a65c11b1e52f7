import Crypto
import PipelineCore
import PlainJSON
import RedisClient

/// Failed sign-ins counted per name in Redis (`iap:console:signin:<sha256 of the name>`, which
/// expires with its window), so every console process counts them together: after `limit`
/// failures in a window the name is refused (`429`, with `Retry-After`) until the window ends,
/// before any password is checked. Guessing is so bounded at `limit` a window per name, from any
/// address. The price: someone who knows a name can keep it out for a window; a right password
/// signs in only once the window ends (an admin can end it early: `DEL` the key).
struct SignInThrottle: Sendable {
    static let limit = 10
    static let window: Duration = .seconds(900)

    let redis: RedisClient
    let keys: RedisKeys

    /// How long `name` is still refused; `nil` when it may try.
    func refusal(of name: String) async throws -> Duration? {
        let replies = try await redis.pipeline([RedisCommand("GET", key(name)), RedisCommand("PTTL", key(name))])
        for reply in replies { try reply.checked() }
        guard let count = replies[0].string.flatMap(Int.init), count >= Self.limit else { return nil }
        return .milliseconds(max(replies[1].int ?? 0, 1000))
    }

    /// Counts a failure: the window starts with a name's first failure (`SET … NX EX`), so the
    /// key always expires.
    func failed(_ name: String) async throws {
        let replies = try await redis.pipeline([
            RedisCommand("SET", key(name), "0", "EX", String(Self.window.components.seconds), "NX"), RedisCommand("INCR", key(name)),
        ])
        for reply in replies { try reply.checked() }
    }

    func succeeded(_ name: String) async throws {
        try await redis.send("DEL", key(name)).checked()
    }

    private func key(_ name: String) -> String { keys.consoleSignInFailures(Hex.encode(SHA256.hash(data: Array(name.utf8)))) }
}
