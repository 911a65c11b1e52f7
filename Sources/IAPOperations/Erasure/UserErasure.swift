import Crypto
import Foundation
import PipelineCore
import RedisClient

/// What an erasure did (`DELETE /v1/users/{id}`, `iapctl user erase`).
package struct UserErasure: Codable, Sendable, Equatable {
    package var userID: String
    /// What the user's purchases are kept under now (`erased:<hex>`): not the person.
    package var pseudonym: String
    /// Grant records, holds, owners, subscription records and tickets that named the user and
    /// now name the pseudonym.
    package var renamed: Int
    /// Fulfilment entries naming the user, deleted.
    package var entriesDeleted: Int
    /// The user's own keys deleted: consent, consumption facts, app account tokens, Apple Account
    /// seats, offer signatures, daily windows (those that existed).
    package var keysDeleted: Int

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case pseudonym, renamed
        case entriesDeleted = "entries_deleted"
        case keysDeleted = "keys_deleted"
    }
}

extension PipelineStore {
    /// Erases a user: one documented procedure (docs/operations/erasure.md), each step safe to
    /// repeat, so a crash is healed by erasing again.
    /// 1. The pseudonym: SHA-256 of the deployment's erasure salt and the user id.
    /// 2. Every bucket read at once (its indexes, counts and stream); the user's tickets renamed
    ///    (`pseudonymise_tickets`); then in each bucket that holds anything of the user, in one
    ///    step, the records renamed, the stream's entries naming the user deleted and the user's
    ///    indexes deleted (`erase_user_in_bucket`).
    /// 3. The user's own keys (not in a bucket): consent, consumption facts, app account tokens,
    ///    Apple Account seats, offer signatures, daily windows.
    /// 4. The tombstone under the pseudonym: the record answers `410` while nothing new is granted.
    package func erase(user: String, now: Int64 = currentTimeMs()) async throws -> UserErasure {
        let pseudonym = try await pseudonym(of: user)
        var erasure = UserErasure(userID: user, pseudonym: pseudonym, renamed: 0, entriesDeleted: 0, keysDeleted: 0)
        let found = try await erasureReads(of: user)
        // One call per bucket of tickets: each call's keys lie in one slot.
        for tickets in found.tickets.sorted(by: { $0.key < $1.key }).map(\.value) {
            erasure.renamed += try await run(PseudonymiseTickets(tickets: tickets, user: user, pseudonym: pseudonym))
        }
        let entries = try await entries(naming: user)
        let buckets = keys.everyBucket
        for index in found.touched.union(entries.keys).sorted() {
            let (renamed, deleted) = try await run(
                EraseUserInBucket(
                    buckets[index], user: user, pseudonym: pseudonym, records: found.records[index] ?? [], entries: entries[index] ?? [],
                    destinations: found.destinations[index] ?? []),
                replicated: true)
            erasure.renamed += renamed
            erasure.entriesDeleted += deleted
        }
        erasure.keysDeleted = try await deleteOwnKeys(of: user, products: found.products, accounts: found.accounts, tokens: found.tokens)
        try await redis.send("SET", keys.erased(pseudonym: pseudonym), String(now)).checked()
        return erasure
    }

    /// Whether the user was erased and nothing was granted or held to them since.
    package func isErased(user: String) async throws -> Bool {
        guard let salt = try await redis.send("GET", keys.erasureSalt).string else { return false }
        let tombstone = try await redis.send("EXISTS", keys.erased(pseudonym: Self.pseudonym(of: user, salt: salt)))
        guard tombstone.int == 1 else { return false }
        let indexes = try await redis.pipeline(keys.everyBucket.map { RedisCommand("EXISTS", $0.purchases(user: user)) })
        return indexes.allSatisfy { $0.int == 0 }
    }

    static func pseudonym(of user: String, salt: String) -> String {
        let digest = SHA256.hash(data: Data((salt + "\n" + user).utf8))
        return "erased:" + digest.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The deployment's salt (made by the first erasure, kept for ever) applied to the user.
    private func pseudonym(of user: String) async throws -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let fresh = bytes.map { String(format: "%02x", $0) }.joined()
        let reply = try await redis.send("SET", keys.erasureSalt, fresh, "NX", "GET").checked()
        return Self.pseudonym(of: user, salt: reply.string ?? fresh)
    }
}
