import PipelineCore
import PlainJSON
import RedisClient

/// `seat_apple_account`: a user's place among the users who bought on one Apple Account, and
/// whether it is within `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT`.
package struct SeatAppleAccount: PipelineScript {
    package static let script = LuaSource.script("seat_apple_account")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, appTransactionID: String, user: String, limit: Int) {
        self.keys = [keys.appleAccount(appTransactionID)]
        arguments = [JSONValue.object(["user": .string(user), "limit": .string(String(limit))]).canonicalText]
    }

    /// Whether the user's place is within the limit.
    package static func decode(_ reply: RedisReply) throws -> Bool { try reply.flag(script: name) }
}
