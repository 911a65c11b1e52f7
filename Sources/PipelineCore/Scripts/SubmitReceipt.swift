import PlainJSON
import RedisClient

/// `submit_receipt`: a new ticket and its job, unless this user sent this receipt before or
/// the bucket's queue is full. A resubmission names the ticket it produced: declared, then answered.
package struct SubmitReceipt: DeclaringScript {
    package static let script = LuaSource.script("submit_receipt")
    package private(set) var keys: [String]
    package private(set) var arguments: [String]
    private let redisKeys: RedisKeys
    private var members: JSONObject

    package enum Reply: Sendable, Equatable {
        case queued(ticket: String)
        case resubmitted(ticket: String)
        /// Refused: the bucket holds `depth` jobs waiting to be verified, its share of the limit.
        case queueFull(depth: Int)
    }

    /// `maxDepth`: the bucket's share of `IAP_MAX_QUEUE_DEPTH` (0: no limit).
    package init(_ keys: RedisKeys, job: Job, receiptDigest: String, ttl: Duration, clientKey: String? = nil, maxDepth: Int = 0) {
        redisKeys = keys
        self.keys = [keys.receipt(digest: receiptDigest), keys.ticket(job.ticket), keys.queue(.verify), keys.retry]
        members = [
            "ticket": .string(job.ticket), "now": .string(String(job.enqueuedAt)), "ttl": .string(String(ttl.components.seconds)),
            "user_id": .string(job.userID), "product_id": .string(job.toVerify?.productID ?? ""),
            "transaction_id": .string(job.toVerify?.transactionID ?? ""), "channel": .string(keys.results),
            "client_key": .string(clientKey ?? ""), "max_depth": .string(String(maxDepth)),
        ]
        arguments = [job.encoded(), JSONValue.object(members).canonicalText]
    }

    /// The ticket a resubmission names: its hash is declared as the fifth key. A ticket of
    /// another bucket (an id from before buckets, which a migration put where its hash says) is
    /// not declared (it lies in another slot): it was copied with its receipt key and the same
    /// time to live, so it stands while that key does.
    package mutating func declare(_ needed: RedisReply) throws {
        guard let existing = needed.string else { throw ScriptReplyError(script: Self.name, reply: needed) }
        let elsewhere = redisKeys.ticketInThisBucket(existing) == nil
        keys = Array(keys.prefix(4)) + (elsewhere ? [] : [redisKeys.ticket(existing)])
        members["existing"] = .string(existing)
        members["elsewhere"] = elsewhere ? .bool(true) : nil
        arguments[1] = JSONValue.object(members).canonicalText
    }

    package static func decode(_ reply: RedisReply) throws -> Reply {
        guard let items = reply.array, items.count == 2, let code = items[0].int, let text = items[1].string else {
            throw ScriptReplyError(script: name, reply: reply)
        }
        switch (code, text) {
        case (1, _): return .queued(ticket: text)
        case (0, _): return .resubmitted(ticket: text)
        case (-3, _): return .queueFull(depth: Int(text) ?? 0)
        default: throw ScriptReplyError(script: name, reply: reply)
        }
    }
}

/// `take_submission_permit`: a new submission counted in one second's window of a client key or
/// of a user, before `submit_receipt`; `false` when that limit is spent.
package struct TakeSubmissionPermit: PipelineScript {
    package static let script = LuaSource.script("take_submission_permit")
    package let keys: [String]
    package let arguments: [String]

    package init(window: String, limit: Int) {
        keys = [window]
        arguments = [String(max(limit, 1))]
    }

    package static func decode(_ reply: RedisReply) throws -> Bool { try reply.flag(script: name) }
}
