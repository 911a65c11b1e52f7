import PlainJSON
import RedisClient

/// `seat_apple_account`: a user's place among the users who bought on one Apple Account, and
/// whether it is within `IAP_MAX_ACCOUNTS_PER_APPLE_ACCOUNT`.
struct SeatAppleAccount: PipelineScript {
    static let script = LuaSource.script("seat_apple_account", PackageResources.seat_apple_account_lua)
    let keys: [String]
    let arguments: [String]

    init(_ keys: RedisKeys, appTransactionID: String, user: String, limit: Int) {
        self.keys = [keys.appleAccount(appTransactionID)]
        arguments = [JSONValue.object(["user": .string(user), "limit": .string(String(limit))]).canonicalText]
    }

    /// Whether the user's place is within the limit.
    static func decode(_ reply: RedisReply) throws -> Bool { try reply.flag(script: name) }
}
