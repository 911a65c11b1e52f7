import PlainJSON
import RedisClient

/// `reap_expired_workers`: the in-flight jobs of workers past their lease back to their queues.
/// The expired workers' in-flight lists, then the tickets of the jobs in them, are declared as
/// the script names them.
package struct ReapExpiredWorkers: DeclaringScript {
    package static let script = LuaSource.script("reap_expired_workers")
    private let redisKeys: RedisKeys
    private var declared: DeclaredKeys
    private var members: JSONObject
    private var inflight: JSONObject = [:]
    private var tickets: JSONObject = [:]
    package private(set) var arguments: [String]
    package var keys: [String] { declared.list }

    package init(_ keys: RedisKeys, reaper: String, lease: Duration, maxRedeliveries: Int, lock: Duration, forgetAfter: Duration, now: Int64?) {
        redisKeys = keys
        declared = DeclaredKeys([keys.workers, keys.dead, keys.reaperLock] + Stage.allCases.map(keys.queue))
        members = [
            "now": pinnedNow(now), "lease_ms": .string(String(lease.milliseconds)),
            "max_redeliveries": .string(String(maxRedeliveries)), "lock_ms": .string(String(lock.milliseconds)),
            "reaper": .string(reaper), "channel": .string(keys.results), "forget_ms": .string(String(forgetAfter.milliseconds)),
        ]
        arguments = [JSONValue.object(members).canonicalText]
    }

    package mutating func declare(_ needed: RedisReply) throws {
        let named = try needed.json(script: Self.name)
        for member in named["members"]?.array ?? [] {
            guard let member = member.string else { throw ScriptReplyError(script: Self.name, reply: needed) }
            inflight[member] = .int(declared.index(of: redisKeys.inflight(member: member)))
        }
        for ticket in named["tickets"]?.array ?? [] {
            guard let ticket = ticket.string else { throw ScriptReplyError(script: Self.name, reply: needed) }
            // A ticket in another bucket: the job is none of ours (0: no hash to count on).
            tickets[ticket] = .int(redisKeys.ticketInThisBucket(ticket).map { declared.index(of: $0) } ?? 0)
        }
        members["inflight"] = .object(inflight)
        members["tickets"] = .object(tickets)
        arguments = [JSONValue.object(members).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> PipelineStore.ReapResult {
        guard let counts = reply.array?.compactMap(\.int), counts.count == 3, counts[0] >= -1 else {
            throw ScriptReplyError(script: name, reply: reply)
        }
        return .init(ran: counts[0] >= 0, workers: Int(max(counts[0], 0)), returned: Int(counts[1]), deadLettered: Int(counts[2]))
    }
}
