import RedisClient

/// The pipeline's Lua as built into the binary: one file per command under `Lua/` and the
/// shared `local function`s under `Lua/includes/` (SwiftPM `embedInCode`: no resource bundle to
/// ship beside an executable). A line `--- @include "name"` brings in `includes/name.lua` once,
/// where it is first named, with the includes it names itself (as BullMQ's commands do). Every
/// script begins by taking its slot's migration guard off `KEYS` (`dropMigrationGuard`).
enum LuaSource {
    /// Every include, by name (a test checks this against the folder).
    static let includes: [String: [UInt8]] = [
        "ack_for_owner": PackageResources.ack_for_owner_lua,
        "ack_job": PackageResources.ack_job_lua,
        "add_event": PackageResources.add_event_lua,
        "announce_entitlements": PackageResources.announce_entitlements_lua,
        "apply_subscription": PackageResources.apply_subscription_lua,
        "finish_parts": PackageResources.finish_parts_lua,
        "grant_effects": PackageResources.grant_effects_lua,
        "grant_entry": PackageResources.grant_entry_lua,
        "hold_entry": PackageResources.hold_entry_lua,
        "read_hold": PackageResources.read_hold_lua,
        "redis_now": PackageResources.redis_now_lua,
        "schedule_recheck": PackageResources.schedule_recheck_lua,
        "settle_hold": PackageResources.settle_hold_lua,
        "share_purchase": PackageResources.share_purchase_lua,
        "split_list": PackageResources.split_list_lua,
        "ticket_status": PackageResources.ticket_status_lua,
    ]

    /// The script `name`, from its file's bytes, with its includes.
    static func script(_ name: String, _ file: [UInt8]) -> RedisScript {
        RedisScript(name: name, source: compose(String(decoding: file, as: UTF8.self)))
    }

    /// What every script does first: it takes its slot's migration guard off the end of `KEYS`
    /// (`PipelineStore.run` names it last in every call; `RedisKeys.migrationGuard`), so that the
    /// script's `KEYS` are its header's and nothing in it can touch the guard.
    static let dropMigrationGuard = "table.remove(KEYS) -- the migration guard: named last by every call, never touched"

    /// `text` with every `--- @include` replaced by the include (once per script). An include
    /// that does not exist is a programming error caught by the test that loads every script.
    static func compose(_ text: String) -> String {
        var included: Set<String> = []
        var lines = compose(text, included: &included).split(separator: "\n", omittingEmptySubsequences: false)
        // After the `#!lua` line, which must stay the first.
        lines.insert(Substring(dropMigrationGuard), at: lines.first?.hasPrefix("#!") == true ? 1 : 0)
        return lines.joined(separator: "\n")
    }

    private static func compose(_ text: String, included: inout Set<String>) -> String {
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let name = includeName(line) else {
                lines.append(line)
                continue
            }
            guard included.insert(name).inserted else { continue }
            guard let file = includes[name] else { preconditionFailure("Lua include '\(name)' does not exist") }
            lines.append(Substring(compose(String(decoding: file, as: UTF8.self), included: &included)))
        }
        return lines.joined(separator: "\n")
    }

    /// The name in `--- @include "name"`, or nil for any other line.
    static func includeName(_ line: Substring) -> String? {
        let prefix = "--- @include \""
        guard line.hasPrefix(prefix), line.hasSuffix("\""), line.count > prefix.count + 1 else { return nil }
        return String(line.dropFirst(prefix.count).dropLast())
    }
}
