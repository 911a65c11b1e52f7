import ClusterHarness
import PipelineCore
import IAPStages

/// Nothing Apple sent is lost: every notification apple-sim signed during the trial — delivered,
/// delivered late, or never (an outage longer than its retries, an attempt lost on the way) — is
/// stored in the pipeline (`notification:<uuid>`), by the intake or from Apple's history by the
/// notifier's sweep.
struct NotificationAudit {
    let store: PipelineStore

    struct Books {
        var sent = 0
        var undelivered = 0
        var missing: [String] = []
    }

    /// Waits up to `timeout` for every notification to be stored (the sweep runs every 2 s).
    func settle(_ cluster: LocalCluster, timeout: Duration) async throws -> Books {
        let deadline = ContinuousClock.now + timeout
        while true {
            let sent = try await cluster.sentNotifications()
            var books = Books(sent: sent.count, undelivered: sent.filter { !$0.delivered }.count)
            for notification in sent {
                let ticket = try? await store.notificationTicket(uuid: notification.uuid, originalTransactionID: notification.originalTransactionID)
                if ticket == nil { books.missing.append("\(notification.type) \(notification.uuid)") }
            }
            if books.missing.isEmpty || ContinuousClock.now >= deadline { return books }
            try await Task.sleep(for: .milliseconds(250))
        }
    }
}
