import PipelineCore
import PlainJSON
import RedisClient

/// `erase_user_in_bucket`: one bucket's part of a user's erasure, in one step (see the script).
package struct EraseUserInBucket: PipelineScript {
    package static let script = LuaSource.script("erase_user_in_bucket")
    package let keys: [String]
    package let arguments: [String]

    /// `records`: the bucket's grant records, holds, owners and subscription records that may name
    /// the user; `entries`: the ids of its stream's entries that do; `destinations`: the webhook
    /// destinations other than `default` routed in this bucket (`webhook:destinations`), whose
    /// lists of the user's events go too.
    package init(
        _ bucket: RedisKeys, user: String, pseudonym: String, records: [String], entries: [String], destinations: [String] = []
    ) {
        let fixed = [
            bucket.purchases(user: user), bucket.lifetime(user: user), bucket.subscriptions(user: user), bucket.refunds(user: user),
            bucket.refundsProrated(user: user), bucket.webhookEvents(user: user), bucket.webhookBusy, bucket.fulfilment,
            bucket.userEvents,
        ]
        let others = destinations.filter { $0 != RedisKeys.defaultWebhookDestination }
        let webhooks = others.flatMap { [bucket.webhookEvents(user: user, to: $0), bucket.webhookBusy(to: $0)] }
        keys = fixed + records + webhooks
        let first = fixed.count + records.count
        arguments = [JSONValue.object([
            "user": .string(user), "pseudonym": .string(pseudonym),
            "records": .array(records.indices.map { .int(fixed.count + $0 + 1) }),
            "entries": .array(entries.map { .string($0) }),
            "webhooks": .array(others.indices.map { .array([.int(first + 2 * $0 + 1), .int(first + 2 * $0 + 2)]) }),
        ]).canonicalText]
    }

    /// How many records now name the pseudonym, how many entries were deleted.
    package static func decode(_ reply: RedisReply) throws -> (renamed: Int, deleted: Int) {
        guard let items = reply.array, items.count == 2, let renamed = items[0].int, let deleted = items[1].int else {
            throw ScriptReplyError(script: name, reply: reply)
        }
        return (Int(renamed), Int(deleted))
    }
}

/// `pseudonymise_tickets`: the user's tickets in one bucket name the pseudonym while they live.
package struct PseudonymiseTickets: PipelineScript {
    package static let script = LuaSource.script("pseudonymise_tickets")
    package let keys: [String]
    package let arguments: [String]

    package init(tickets: [String], user: String, pseudonym: String) {
        keys = tickets
        arguments = [user, pseudonym]
    }

    package static func decode(_ reply: RedisReply) throws -> Int {
        guard let renamed = reply.int else { throw ScriptReplyError(script: name, reply: reply) }
        return Int(renamed)
    }
}
