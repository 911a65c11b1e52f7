/// `NotificationHistoryRequest`: which notifications Get Notification History returns. Apple takes
/// a type (with or without a subtype) or a transaction id, not both; it keeps 180 days.
public struct NotificationHistoryQuery: Codable, Sendable, Equatable {
    /// UNIX ms, inclusive.
    public var startDate: Int64
    /// UNIX ms, exclusive; one in the future means now.
    public var endDate: Int64
    public var notificationType: String?
    public var notificationSubtype: String?
    /// Any transaction id of the customer: their notifications, every product.
    public var transactionId: String?
    /// Only what never reached our server, including what Apple is still retrying.
    public var onlyFailures: Bool?

    public init(
        startDate: Int64, endDate: Int64, notificationType: String? = nil, notificationSubtype: String? = nil,
        transactionId: String? = nil, onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }

    /// Apple's limits, checked before asking: `nil` when Apple would take it.
    public func problem(now: Int64) -> String? {
        if endDate <= startDate { return "the end must be after the start" }
        if startDate < now - Self.keptMs { return "Apple keeps 180 days of notifications: the start is earlier" }
        if notificationType != nil && transactionId != nil { return "Apple takes a notification type or a transaction id, not both" }
        if notificationSubtype != nil && notificationType == nil { return "a subtype needs its notification type" }
        return nil
    }

    /// How long Apple keeps notification history: 180 days.
    public static let keptMs: Int64 = 180 * 86_400_000
}
