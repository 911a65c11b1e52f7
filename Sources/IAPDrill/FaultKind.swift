import ClusterHarness

/// The faults the drill injects into a running pipeline.
package enum FaultKind: String, CaseIterable, Sendable, Codable {
    /// `kill -9` a random stage process, then start a new one.
    case killStage = "kill-stage"
    /// `kill -9` redis-server, then restart it on the same data folder (single topology).
    case killRedis = "kill-redis"
    /// `kill -9` the primary (on a cluster, the one that owns the pipeline's slot); the sentinels
    /// or the cluster promote a replica, the pipeline follows; the killed node comes back as a
    /// replica (sentinel and cluster topologies).
    case failover
    /// The pipeline's slot moves to another primary while receipts flow: by `redis-cli --cluster
    /// reshard`, or by hand, held half-moved so `ASK` and `TRYAGAIN` are met (cluster topology).
    case reshard
    /// `kill -9` the intake mid-request, then start it again: a receipt stored whose 202 never
    /// arrived is resent by its client and must get the same ticket.
    case killIntake = "kill-intake"
    /// apple-sim answers 503 or hangs past the verifier's timeout for 1–3 s.
    case appleOutage = "apple-outage"
    /// SIGTERM a stage process with jobs in flight: it must finish or hand them back and exit 0.
    case sigterm
    /// Garbage and jobs of tickets that do not exist, pushed on every stage queue with redis-cli.
    case poison
    /// SIGSTOP a stage process past its lease, then SIGCONT: it must not ack what the reaper took.
    case stall
    /// `kill -9` an `iap-webhook` process mid-delivery, then start a new one: every event still
    /// reaches the webhook, in order per user (some twice, under the same id).
    case killWebhook = "kill-webhook"
    /// The intake refuses Apple's notification deliveries (apple-sim's URL answers 404, as after a
    /// deploy that broke the route) for longer than apple-sim's compressed retries: what Apple
    /// sends meanwhile is never delivered, and only the notifier's sweep of Apple's history brings
    /// those refunds and renewals in.
    case notificationOutage = "notification-outage"

    /// Column heading in the drill's table.
    var column: String {
        switch self {
        case .killStage: "kill"
        case .killRedis: "redis"
        case .killIntake: "intake"
        case .appleOutage: "apple"
        case .sigterm: "term"
        case .poison: "poison"
        case .stall: "stall"
        case .failover: "failover"
        case .reshard: "reshard"
        case .killWebhook: "hook kill"
        case .notificationOutage: "notif out"
        }
    }

    /// The faults a topology can take: a Redis restart in place (`kill-redis`) with one node, a
    /// failover with sentinels, a failover and a reshard on a cluster.
    package static func all(for topology: RedisTopology) -> [FaultKind] {
        allCases.filter { kind in
            switch kind {
            case .killRedis: topology == .single
            case .failover: topology != .single
            case .reshard: topology == .cluster
            default: true
            }
        }
    }
}
