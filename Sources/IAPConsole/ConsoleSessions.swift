import Crypto
import Foundation
import PipelineCore
import PlainJSON
import RedisClient

/// Sign-ins kept in Redis (`iap:console:session:<sha256 of the cookie>`, expiring after
/// `IAP_CONSOLE_SESSION_S`), so any console process serves them and a sign-out ends them
/// everywhere. Redis holds only the hash of each cookie: reading Redis does not give a session.
/// By hand rather than hummingbird-auth's `SessionMiddleware`, which treats a store that fails as
/// "signed out": here Redis unavailable is a 503, never a silent sign-out.
package struct ConsoleSessions: Sendable {
    package let redis: RedisClient
    package let keys: RedisKeys
    package let lifetime: Duration

    package init(redis: RedisClient, keys: RedisKeys, lifetime: Duration) {
        self.redis = redis
        self.keys = keys
        self.lifetime = lifetime
    }

    /// A new session for `user`; returns the cookie's value (32 random bytes, base64url).
    package func open(for user: ConsoleUser) async throws -> String {
        let id = TicketID.random(bytes: 32)
        let record = JSONValue.object(["user": .string(user.name), "role": .string(user.role.rawValue)]).canonicalText
        try await redis.send("SET", key(id), record, "EX", String(lifetime.components.seconds)).checked()
        return id
    }

    /// The session's user, or `nil` for an unknown, expired or malformed cookie.
    package func user(for id: String) async throws -> ConsoleUser? {
        guard Self.isWellFormed(id) else { return nil }
        let reply = try await redis.send("GET", key(id)).checked()
        guard let text = reply.string, let json = try? JSONValue(parsing: text),
            let name = json["user"]?.string, let role = json["role"]?.string.flatMap(ConsoleRole.init(rawValue:))
        else { return nil }
        return ConsoleUser(name: name, role: role)
    }

    package func close(_ id: String) async throws {
        guard Self.isWellFormed(id) else { return }
        _ = try await redis.send("DEL", key(id))
    }

    func key(_ id: String) -> String { keys.consoleSession(Hex.encode(SHA256.hash(data: Array(id.utf8)))) }

    static func isWellFormed(_ id: String) -> Bool {
        id.utf8.count == 43 && id.utf8.allSatisfy { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0)
            || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) }
    }
}
