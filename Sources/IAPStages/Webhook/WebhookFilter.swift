import PlainJSON

/// Which fulfilment events a webhook destination gets: by app (`bundle_id`), environment and
/// event type, each a list or `nil` (any). An event passes a list when its field is in it or when
/// it has no such field (an operator's grant names no environment); `route_fulfilment_events`
/// applies it, so an event turned away never enters the destination's lists.
package struct WebhookFilter: Sendable, Equatable {
    package var apps: [String]?
    package var environments: [String]?
    package var events: [String]?

    package init(apps: [String]? = nil, environments: [String]? = nil, events: [String]? = nil) {
        self.apps = apps
        self.environments = environments
        self.events = events
    }

    /// Everything passes.
    package static let all = WebhookFilter()

    /// The two environments Apple has.
    package static let knownEnvironments = ["Production", "Sandbox"]

    /// Every `event` a fulfilment entry may have (docs/webhooks.md): a filter naming another is a
    /// typo, refused when the file is read rather than silently matching nothing.
    package static let knownEvents: Set<String> = [
        "granted", "renewed", "adopted", "revoked", "reinstated", "held", "released", "rejected", "entitlement_changed",
        "expired", "notification", "auto_renew_changed", "renewal_preference_changed", "price_increase", "refund_declined",
        "renewal_extended", "consent_rescinded", "refund_answered", "retention_offered",
        "entitlement_granted", "entitlement_ended",
    ]

    /// The script's `filter` argument; `nil` when everything passes.
    var json: JSONValue? {
        guard self != .all else { return nil }
        return JSONValue.members([
            "apps": apps.map { .array($0.map(JSONValue.string)) },
            "environments": environments.map { .array($0.map(JSONValue.string)) },
            "events": events.map { .array($0.map(JSONValue.string)) },
        ])
    }

    /// Whether an event with these fields passes (as the script decides; for `iapctl` and tests).
    package func admits(_ fields: [String: String]) -> Bool {
        for (list, field) in [(apps, "bundle_id"), (environments, "environment"), (events, "event")] {
            if let list, let value = fields[field], !list.contains(value) { return false }
        }
        return true
    }
}
