import PipelineCore

/// What a verify worker's housekeeping needs to queue due re-checks (`promote_due_rechecks`).
package struct RecheckPromotion: Sendable {
    package var schedule: RecheckSchedule
    package var ticketTTL: Duration

    package init(schedule: RecheckSchedule, ticketTTL: Duration) {
        self.schedule = schedule
        self.ticketTTL = ticketTTL
    }
}
