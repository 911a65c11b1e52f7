import IAPStages
import PipelineCore
import RedisClient

extension PipelineStore {
    /// What `user` is entitled to at `now`: each entitlement of the non-consumables granted to them
    /// and not revoked, and of their subscriptions that are active (until `expires_at`) or in a
    /// grace period (until `grace_expires_at`), and of their grants for a time until each one's end
    /// (`until`, whether or not the sweep has ended it yet). `catalog` names each product's
    /// entitlements. Four round trips whatever the user owns; an unknown user has none.
    package func entitlements(user: String, catalog: ProductCatalog, now: Int64 = currentTimeMs()) async throws -> UserEntitlements {
        let indexes = try await purchaseIndexes(of: user)
        let units = indexes.lifetime
        let subscriptions = indexes.subscriptions
        var found: [UserEntitlements.Entitlement] = []
        if !units.isEmpty || !subscriptions.isEmpty {
            let replies = try await redis.pipeline(
                // A lifetime set holds non-consumables, whose unit is their original transaction id.
                units.map {
                    RedisCommand("HMGET", keys.grant(unit: $0, originalTransactionID: $0), "product_id", "original_transaction_id", "revoked_at")
                }
                    + subscriptions.map {
                        RedisCommand(
                            "HMGET", keys.subscription(originalTransactionID: $0), "product_id", "status", "expires_at",
                            "grace_expires_at")
                    })
            for reply in replies.prefix(units.count) {
                let fields = (reply.array ?? []).map(\.string)
                guard fields.count == 3, let product = fields[0], let original = fields[1], fields[2] == nil else { continue }
                for name in catalog.entitlements[product] ?? [] {
                    found.append(.init(entitlement: name, productID: product, status: "active", expiresAt: nil, originalTransactionID: original))
                }
            }
            for (original, reply) in zip(subscriptions, replies.dropFirst(units.count)) {
                let fields = (reply.array ?? []).map(\.string)
                guard fields.count == 4, let product = fields[0], let status = fields[1] else { continue }
                let expires = fields[2].flatMap { Int64($0) }
                let graceEnds = fields[3].flatMap { Int64($0) }
                guard Self.isCurrent(status: status, expiresAt: expires, graceExpiresAt: graceEnds, now: now) else { continue }
                for name in catalog.entitlements[product] ?? [] {
                    found.append(.init(
                        entitlement: name, productID: product, status: status, expiresAt: expires.map(Ticket.iso8601(milliseconds:)),
                        originalTransactionID: original))
                }
            }
        }
        for grant in try await timedGrants(of: user) where grant.isActive(at: now) {
            found.append(.init(
                entitlement: grant.entitlement, productID: "", status: "active", expiresAt: Ticket.iso8601(milliseconds: grant.until),
                originalTransactionID: "", grantID: grant.grantID))
        }
        found.sort {
            ($0.entitlement, $0.productID, $0.originalTransactionID, $0.grantID ?? "")
                < ($1.entitlement, $1.productID, $1.originalTransactionID, $1.grantID ?? "")
        }
        return UserEntitlements(userID: user, entitlements: found, asOf: Ticket.iso8601(milliseconds: now))
    }
}
