/// `IAP_SHARING_POLICY`: what happens when an account proves a non-consumable or subscription
/// another account was granted (one Apple ID paying for several game accounts). Consumables are
/// never shared or transferred: a consumable is granted once, ever.
package enum SharingPolicy: String, Codable, Sendable, CaseIterable {
    /// The first account granted it keeps it; the other gets `duplicate`, `owned_by_another_account`.
    case bind
    /// The newest account that proves it takes it over: the old owner's grant is revoked
    /// (`transferred`), the new owner's granted; entitlements and renewals move with it.
    case transfer
    /// Both keep its entitlements (the other gets `duplicate`, `shared`); it is granted once.
    case share
}
