import PipelineCore
import RedisClient

extension PipelineStore {
    /// Moves the next fulfilment entries (at most `count`) that `filter` admits to their users'
    /// delivery lists for `destination` and queues a delivery job for each user without one;
    /// returns how many entries were read.
    package func routeFulfilmentEvents(
        to destination: String = RedisKeys.defaultWebhookDestination, filter: WebhookFilter = .all, consumer: String,
        count: Int = 500, now: Int64 = currentTimeMs()
    ) async throws -> Int {
        try await run(RouteFulfilmentEvents(keys, to: destination, filter: filter, consumer: consumer, count: count, now: now))
    }

    /// The oldest event waiting for delivery to `user` at `destination` (JSON: `id`, `fields`), if any.
    package func nextWebhookEvent(user: String, to destination: String = RedisKeys.defaultWebhookDestination) async throws -> String? {
        try await redis.send("LINDEX", keys.webhookEvents(user: user, to: destination), "0").string
    }

    /// A delivery ended (see `finish_webhook_event`): the event leaves the user's list (into the
    /// dead letters with `deadEntry`), and the user's job goes on to their next event or ends.
    package func finishWebhookEvent(
        _ payload: String, member: String, job: Job, eventID: String, deadEntry: String? = nil, now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        try await run(FinishWebhookEvent(keys, member: member, taken: payload, job: job, eventID: eventID, deadEntry: deadEntry, now: now))
    }
}
