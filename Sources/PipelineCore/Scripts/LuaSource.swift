import RedisClient

/// The pipeline's Lua as built into the binary: one file per command under `Lua/` and the
/// shared `local function`s under `Lua/includes/` (SwiftPM `embedInCode`: no resource bundle to
/// ship beside an executable). A line `--- @include "name"` brings in `includes/name.lua` once,
/// where it is first named, with the includes it names itself (as BullMQ's commands do). Every
/// script begins by taking its slot's migration guard off `KEYS` (`dropMigrationGuard`).
package enum LuaSource {
    /// Every command, by name (a test checks this against the folder): the script types of every
    /// target find their Lua here.
    static let commands: [String: [UInt8]] = [
        "accept_notification": PackageResources.accept_notification_lua,
        "acknowledge_job": PackageResources.acknowledge_job_lua,
        "apply_subscription_notification": PackageResources.apply_subscription_notification_lua,
        "claim_notification_sweep": PackageResources.claim_notification_sweep_lua,
        "claim_part": PackageResources.claim_part_lua,
        "claim_purchases": PackageResources.claim_purchases_lua,
        "dead_letter_job": PackageResources.dead_letter_job_lua,
        "end_timed_grant": PackageResources.end_timed_grant_lua,
        "erase_user_in_bucket": PackageResources.erase_user_in_bucket_lua,
        "finish_notification_sweep": PackageResources.finish_notification_sweep_lua,
        "finish_part": PackageResources.finish_part_lua,
        "finish_ticket": PackageResources.finish_ticket_lua,
        "finish_webhook_event": PackageResources.finish_webhook_event_lua,
        "force_recheck": PackageResources.force_recheck_lua,
        "count_subscription": PackageResources.count_subscription_lua,
        "record_queue_sample": PackageResources.record_queue_sample_lua,
        "record_retention_answer": PackageResources.record_retention_answer_lua,
        "forward_job": PackageResources.forward_job_lua,
        "grant_by_operator": PackageResources.grant_by_operator_lua,
        "index_user_events": PackageResources.index_user_events_lua,
        "import_purchase": PackageResources.import_purchase_lua,
        "grant_for_a_time": PackageResources.grant_for_a_time_lua,
        "grant_purchases": PackageResources.grant_purchases_lua,
        "hold_api_endpoint": PackageResources.hold_api_endpoint_lua,
        "mark_verifying": PackageResources.mark_verifying_lua,
        "promote_due_rechecks": PackageResources.promote_due_rechecks_lua,
        "pseudonymise_tickets": PackageResources.pseudonymise_tickets_lua,
        "promote_due_retries": PackageResources.promote_due_retries_lua,
        "reap_expired_workers": PackageResources.reap_expired_workers_lua,
        "record_apple_answers": PackageResources.record_apple_answers_lua,
        "record_apple_failure": PackageResources.record_apple_failure_lua,
        "record_consumption": PackageResources.record_consumption_lua,
        "record_heartbeat": PackageResources.record_heartbeat_lua,
        "record_notification": PackageResources.record_notification_lua,
        "reinstate_grant": PackageResources.reinstate_grant_lua,
        "keep_history_revision": PackageResources.keep_history_revision_lua,
        "reject_held_purchase": PackageResources.reject_held_purchase_lua,
        "release_daily_grant": PackageResources.release_daily_grant_lua,
        "release_held_purchase": PackageResources.release_held_purchase_lua,
        "replay_dead_letter": PackageResources.replay_dead_letter_lua,
        "requeue_inflight": PackageResources.requeue_inflight_lua,
        "reserve_daily_grant": PackageResources.reserve_daily_grant_lua,
        "revoke_by_operator": PackageResources.revoke_by_operator_lua,
        "revoke_grant": PackageResources.revoke_grant_lua,
        "route_fulfilment_events": PackageResources.route_fulfilment_events_lua,
        "schedule_retry": PackageResources.schedule_retry_lua,
        "seat_apple_account": PackageResources.seat_apple_account_lua,
        "settle_held_ticket": PackageResources.settle_held_ticket_lua,
        "split_job": PackageResources.split_job_lua,
        "submit_receipt": PackageResources.submit_receipt_lua,
        "take_api_permit": PackageResources.take_api_permit_lua,
        "take_apple_probe": PackageResources.take_apple_probe_lua,
        "take_jobs": PackageResources.take_jobs_lua,
        "take_submission_permit": PackageResources.take_submission_permit_lua,
        "trim_dead_letters": PackageResources.trim_dead_letters_lua,
        "trim_fulfilment_stream": PackageResources.trim_fulfilment_stream_lua,
    ]

    /// Every include, by name (a test checks this against the folder).
    static let includes: [String: [UInt8]] = [
        "ack_for_owner": PackageResources.ack_for_owner_lua,
        "ack_job": PackageResources.ack_job_lua,
        "add_event": PackageResources.add_event_lua,
        "append_event": PackageResources.append_event_lua,
        "each_job": PackageResources.each_job_lua,
        "announce_entitlements": PackageResources.announce_entitlements_lua,
        "apply_subscription": PackageResources.apply_subscription_lua,
        "count_figures": PackageResources.count_figures_lua,
        "count_subscriber": PackageResources.count_subscriber_lua,
        "sale_field": PackageResources.sale_field_lua,
        "finish_parts": PackageResources.finish_parts_lua,
        "grant_effects": PackageResources.grant_effects_lua,
        "grant_entry": PackageResources.grant_entry_lua,
        "hold_entry": PackageResources.hold_entry_lua,
        "index_purchase": PackageResources.index_purchase_lua,
        "new_ticket": PackageResources.new_ticket_lua,
        "read_hold": PackageResources.read_hold_lua,
        "redis_now": PackageResources.redis_now_lua,
        "schedule_recheck": PackageResources.schedule_recheck_lua,
        "settle_hold": PackageResources.settle_hold_lua,
        "share_purchase": PackageResources.share_purchase_lua,
        "split_list": PackageResources.split_list_lua,
        "take_back_early": PackageResources.take_back_early_lua,
        "ticket_status": PackageResources.ticket_status_lua,
    ]

    /// The command `name` (`Lua/<name>.lua`) with its includes. A name without its file is a
    /// programming error caught by the test that loads every script.
    package static func script(_ name: String) -> RedisScript {
        guard let file = commands[name] else { preconditionFailure("Lua command '\(name)' does not exist") }
        return RedisScript(name: name, source: compose(String(decoding: file, as: UTF8.self)))
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
