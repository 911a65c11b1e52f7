import RedisClient

extension PipelineStore {
    /// Moves the next fulfilment entries (at most `count`) to their users' delivery lists and
    /// queues a delivery job for each user without one; returns how many were routed.
    public func routeFulfilmentEvents(
        consumer: String, count: Int = 500, now: Int64 = currentTimeMs()
    ) async throws -> Int {
        let arguments = RouteFulfilmentArguments(
            prefix: keys.scriptPrefix, group: RedisKeys.webhookGroup, consumer: consumer, count: String(count), now: String(now),
            ttl: String(RedisKeys.webhookTicketTTLSeconds))
        let reply = try await redis.run(
            PipelineScripts.routeFulfilmentEvents, keys: [keys.fulfilment, keys.queue(.webhook), keys.webhookBusy],
            arguments: [arguments.argument])
        if case .error(let message) = reply { throw RedisError.server(message) }
        return Int(reply.int ?? 0)
    }

    /// The oldest event waiting for delivery to `user` (JSON: `id`, `fields`), if any.
    public func nextWebhookEvent(user: String) async throws -> String? {
        try await redis.send("LINDEX", keys.webhookEvents(user: user), "0").string
    }

    /// A delivery ended (see `finish_webhook_event`): the event leaves the user's list (into the
    /// dead letters with `deadEntry`), and the user's job goes on to their next event or ends.
    public func finishWebhookEvent(
        _ payload: String, member: String, job: Job, eventID: String, deadEntry: String? = nil, now: Int64 = currentTimeMs()
    ) async throws -> TransitionResult {
        var next = job
        next.attempts = 0
        next.enqueuedAt = now
        let arguments = WebhookDoneArguments(
            user: job.userID, eventID: eventID, next: next.encoded(), now: String(now), replay: job.webhookEvent != nil,
            deadEntry: deadEntry, ttl: String(RedisKeys.webhookTicketTTLSeconds))
        let reply = try await redis.run(
            PipelineScripts.finishWebhookEvent,
            keys: [
                keys.inflight(member: member), keys.webhookEvents(user: job.userID), keys.webhookBusy, keys.queue(.webhook),
                keys.ticket(job.ticket), keys.dead,
            ],
            arguments: [payload, arguments.argument])
        return TransitionResult(reply.int)
    }
}
