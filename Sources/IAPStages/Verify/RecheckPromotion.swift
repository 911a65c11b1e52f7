import PipelineCore

/// What a verify worker's housekeeping needs to queue due re-checks (`promote_due_rechecks`).
public struct RecheckPromotion: Sendable {
    public var schedule: RecheckSchedule
    public var ticketTTL: Duration

    public init(schedule: RecheckSchedule, ticketTTL: Duration) {
        self.schedule = schedule
        self.ticketTTL = ticketTTL
    }
}
