import PipelineCore
import PlainJSON
import RedisClient

/// `reserve_daily_grant`: a capped purchase's place in the user's rolling 24 hours, reserved
/// before its grant (idempotent per unit).
package struct ReserveDailyGrant: PipelineScript {
    package static let script = LuaSource.script("reserve_daily_grant")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, user: String, product: String, unit: String, limit: Int, now: Int64) {
        self.keys = [keys.dailyWindow(user: user, product: product)]
        arguments = [JSONValue.object([
            "unit": .string(unit), "limit": .string(String(limit)), "now": .string(String(now)),
        ]).canonicalText]
    }

    /// Whether the unit has its place (`false`: the cap is reached).
    package static func decode(_ reply: RedisReply) throws -> Bool { try reply.flag(script: name) }
}

/// `release_daily_grant`: the place of a unit that did not end granted, given back.
package struct ReleaseDailyGrant: PipelineScript {
    package static let script = LuaSource.script("release_daily_grant")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, user: String, product: String, unit: String) {
        self.keys = [keys.dailyWindow(user: user, product: product)]
        arguments = [unit]
    }

    /// Whether the unit had a place.
    package static func decode(_ reply: RedisReply) throws -> Bool { try reply.flag(script: name) }
}
