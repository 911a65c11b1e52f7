import PlainJSON
import RedisClient

/// One of the pipeline's Lua scripts (`Lua/<name>.lua`), typed at the Swift edge. A value of
/// the type is one call: the keys it touches, built from `RedisKeys` in the order the file's
/// header lists them, and its named arguments. The type decodes the reply into Swift; a reply
/// code the header does not list throws `ScriptReplyError`, never passes for another outcome.
package protocol PipelineScript: Sendable {
    associatedtype Reply: Sendable
    /// The script: its name (the file's) and its source with its includes.
    static var script: RedisScript { get }
    /// Every key the call touches, in the order of the header's `KEYS`.
    var keys: [String] { get }
    /// `ARGV`, in the order of the header.
    var arguments: [String] { get }
    static func decode(_ reply: RedisReply) throws -> Reply
}

extension PipelineScript {
    /// The script's name: what logs, metrics and the key map call this step.
    package static var name: String { script.name }
}

/// A script that touches keys it learns only by reading (a hold's ticket, the jobs in a dead
/// worker's list): it answers `{-2, needed}` having changed nothing, and is called again with
/// what it named declared, so that every key a script touches is one its caller declared.
package protocol DeclaringScript: PipelineScript {
    /// Adds the keys the reply's `needed` names to this call.
    mutating func declare(_ needed: RedisReply) throws
}

/// A script's reply that its header does not list.
package struct ScriptReplyError: Error, Sendable, Equatable, CustomStringConvertible {
    package let script: String
    package let reply: String

    package init(script: String, reply: RedisReply) {
        self.script = script
        self.reply = "\(reply)"
    }

    package init(script: String, _ why: String) {
        self.script = script
        self.reply = why
    }

    package var description: String { "\(script) answered what it never should: \(reply)" }
}

extension PipelineStore {
    /// How many times a script may name keys to declare before the call gives up (each call
    /// learns more: a dead worker's list, then the tickets in it).
    static let declarationRounds = 4

    /// Runs one call of a script; `replicated`: waits for `replication` (a step that creates
    /// something a client or Apple is told about).
    package func run<S: PipelineScript>(_ call: S, replicated: Bool = false) async throws -> S.Reply {
        try S.decode(try await redis.run(S.script, keys: guarded(call.keys), arguments: call.arguments,
            replicated: replicated ? replication : nil))
    }

    /// A call's keys and, last, its slot's `migrationGuard`: no step runs on a Redis Cluster slot
    /// being migrated (a script's `KEYS` are the header's, then this one, which it never touches).
    func guarded(_ keys: [String]) -> [String] {
        guard let first = keys.first else { return keys }
        return keys + [self.keys.migrationGuard(forKey: first)]
    }

    /// Runs one call of a script that may name keys to declare, declaring them and calling again.
    package func run<S: DeclaringScript>(_ call: S, replicated: Bool = false) async throws -> S.Reply {
        var call = call
        for _ in 0..<Self.declarationRounds {
            let reply = try await redis.run(S.script, keys: guarded(call.keys), arguments: call.arguments,
                replicated: replicated ? replication : nil)
            guard case .array(let items) = reply, items.first?.int == -2 else { return try S.decode(reply) }
            try call.declare(items.count > 1 ? items[1] : .null)
        }
        throw ScriptReplyError(script: S.name, "still naming keys to declare after \(Self.declarationRounds) calls")
    }
}

extension Array {
    /// A batch script's answers, one per item it was given, or the script's error.
    package func onePerItem(of count: Int, script: String) throws -> Self {
        guard self.count == count else { throw ScriptReplyError(script: script, "\(self.count) answers for \(count) items") }
        return self
    }
}

extension RedisReply {
    /// A script's yes or no: 1 or 0, nothing else.
    package func flag(script: String) throws -> Bool {
        switch int {
        case 1: return true
        case 0: return false
        default: throw ScriptReplyError(script: script, reply: self)
        }
    }

    /// The JSON text a script sent (`cjson.encode`), parsed.
    package func json(script: String) throws -> JSONValue {
        guard let text = string, let value = try? JSONValue(parsing: text) else { throw ScriptReplyError(script: script, reply: self) }
        return value
    }
}
