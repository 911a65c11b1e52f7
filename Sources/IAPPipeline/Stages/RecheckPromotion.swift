/// What a verify worker's housekeeping needs to queue due re-checks (`promote_due_rechecks`).
public struct RecheckPromotion: Sendable {
    public var schedule: RecheckSchedule
    public var ticketTTLSeconds: Int

    public init(schedule: RecheckSchedule, ticketTTLSeconds: Int) {
        self.schedule = schedule
        self.ticketTTLSeconds = ticketTTLSeconds
    }
}
