import IAPSettings
import PlainJSON
import RedisClient

/// When the pipeline asks Apple about an auto-renewable subscription itself (the seeds' task
/// engine): `before` its period ends, again `after` it ended if no renewal came, then at most
/// `maxTries` more times with doubling waits (from `after`, at most a day) while Apple has not
/// settled it (billing retry, grace period). Each due re-check sits in `rechecks` (a zset).
package struct RecheckSchedule: Sendable, Equatable {
    package var before: Duration
    package var after: Duration
    package var maxTries: Int

    /// The settings' defaults (`IAP_RECHECK_BEFORE_S`, `IAP_RECHECK_AFTER_S`, `IAP_RECHECK_MAX`).
    package static let standard = RecheckSchedule(
        before: Settings.recheckBefore.defaultDuration, after: Settings.recheckAfter.defaultDuration,
        maxTries: Settings.recheckMax.defaultCount)
    /// The longest wait between two re-checks of one subscription.
    package static let longestWait: Duration = .seconds(86400)

    package init(before: Duration, after: Duration, maxTries: Int) {
        self.before = before
        self.after = after
        self.maxTries = maxTries
    }

    /// Its own settings: `IAP_RECHECK_BEFORE_S`, `IAP_RECHECK_AFTER_S`, `IAP_RECHECK_MAX`.
    package init(reading source: SettingSource) throws(ConfigurationError) {
        self.init(
            before: try source.duration(Settings.recheckBefore), after: try source.duration(Settings.recheckAfter),
            maxTries: try source.count(Settings.recheckMax))
    }

    /// The same object as `json`, written as a member's value with no tree: a grant's argument
    /// carries it each time, and building and writing the tree was about 8 thousand instructions a
    /// grant (callgrind). Members in `json`'s (canonical) order, so the text is the same.
    package func write(into json: inout JSONWriter) {
        json.openObject()
        json.member("after_ms", String(after.milliseconds))
        json.member("before_ms", String(before.milliseconds))
        json.member("longest_ms", String(Self.longestWait.milliseconds))
        json.member("max_tries", String(maxTries))
        json.closeObject()
    }

    /// What the scripts read (`scheduleRecheck` in `GrantEffects`), in milliseconds.
    package var json: JSONValue {
        .members([
            "before_ms": .string(String(before.milliseconds)),
            "after_ms": .string(String(after.milliseconds)),
            "max_tries": .string(String(maxTries)),
            "longest_ms": .string(String(Self.longestWait.milliseconds)),
        ])
    }
}
