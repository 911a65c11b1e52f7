import IAPSettings

/// How often the fleet's two sweeps run, one notifier at a time each: the notification sweep
/// (`IAP_NOTIFICATION_SWEEP_S`) and the refund sweep (`IAP_REFUND_SWEEP_S`); zero: never.
package struct SweepSettings: Sendable, Equatable {
    package var notifications: Duration
    package var refunds: Duration

    package init(reading source: SettingSource) throws(ConfigurationError) {
        notifications = try source.duration(Settings.notificationSweep)
        refunds = try source.duration(Settings.refundSweep)
    }
}
