import AppStoreServerAPI
import PipelineCore
import PlainJSON
import RedisClient

extension PipelineStore {
    /// Records whether `user` consented to consumption information being sent to Apple.
    package func setConsent(user: String, consented: Bool) async throws {
        let reply = try await redis.send("SET", keys.consent(user: user), consented ? "1" : "0")
        if case .error(let message) = reply { throw RedisError.server(message) }
    }

    /// What the game says of one purchase (`PUT /v1/users/{id}/purchases/{transaction_id}/consumption`).
    package struct RecordedConsumption: Sendable, Equatable {
        package var deliveryStatus: ConsumptionInformation.DeliveryStatus
        /// Milliunits, 0–100,000.
        package var percentage: Int?

        package init(deliveryStatus: ConsumptionInformation.DeliveryStatus, percentage: Int?) {
            self.deliveryStatus = deliveryStatus
            self.percentage = percentage
        }
    }

    /// Facts a user keeps (`consumption:<user>`): past it, the one recorded longest ago makes room.
    package static let maxConsumptionFacts = 1000

    /// Records what the game says of `user`'s purchase `transactionID`, replacing what it said
    /// before; returns the purchase whose fact was dropped to keep the user within
    /// `maxConsumptionFacts`, if one was.
    @discardableResult
    package func recordConsumption(
        _ consumption: RecordedConsumption, user: String, transactionID: String, now: Int64 = currentTimeMs(),
        max: Int = PipelineStore.maxConsumptionFacts
    ) async throws -> String? {
        let value = JSONValue.members([
            "delivery_status": .string(consumption.deliveryStatus.rawValue), "consumption_percentage": consumption.percentage.map { .int($0) },
            "recorded_at": .int(now),
        ])
        return try await run(RecordConsumption(keys, user: user, transactionID: transactionID, fact: value, max: max))
    }

    /// What the pipeline knows about a purchase Apple asks consumption information for: whose it
    /// is (the grant's user, else the owner of its original transaction), whether it was granted
    /// and not taken back, whether that user consented, and what the game recorded of it.
    package struct ConsumptionFacts: Sendable, Equatable {
        package var user: String?
        package var delivered: Bool
        package var consented: Bool
        package var recorded: RecordedConsumption?

        package init(user: String?, delivered: Bool, consented: Bool, recorded: RecordedConsumption? = nil) {
            self.user = user
            self.delivered = delivered
            self.consented = consented
            self.recorded = recorded
        }
    }

    package func consumptionFacts(unit: String, originalTransactionID: String, transactionID: String) async throws -> ConsumptionFacts {
        let replies = try await redis.pipeline([
            RedisCommand("HMGET", keys.grant(unit: unit, originalTransactionID: originalTransactionID), "user_id", "revoked_at"),
            RedisCommand("GET", keys.owner(originalTransactionID: originalTransactionID)),
        ])
        let grant = replies[0].array ?? []
        let grantedTo = grant.first?.string
        let revoked = grant.count > 1 && grant[1].string != nil
        guard let user = grantedTo ?? replies[1].string else {
            return ConsumptionFacts(user: nil, delivered: false, consented: false)
        }
        let userReplies = try await redis.pipeline([
            RedisCommand("GET", keys.consent(user: user)), RedisCommand("HGET", keys.consumption(user: user), transactionID),
        ])
        var recorded: RecordedConsumption?
        if let text = userReplies[1].string, let json = try? JSONValue(parsing: Array(text.utf8)),
           let status = json["delivery_status"]?.string.flatMap(ConsumptionInformation.DeliveryStatus.init(rawValue:))
        {
            recorded = RecordedConsumption(deliveryStatus: status, percentage: json["consumption_percentage"]?.int)
        }
        return ConsumptionFacts(
            user: user, delivered: grantedTo != nil && !revoked, consented: userReplies[0].string == "1", recorded: recorded)
    }
}
