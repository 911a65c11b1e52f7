import AppleJWS
import AppleSimulator
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import RedisClient

/// The cluster's apple-sim as the drill, the bench and the tests drive it: transactions made known
/// to its Server API (and signed, as StoreKit 2 gives them to the app), notifications delivered,
/// and the calls its Server API received.
extension LocalCluster {
    /// Registers a transaction with apple-sim's Server API; returns it signed.
    package func registerTransaction(_ transaction: JWSTransaction) async throws -> String {
        let reply = try await control("/control/transactions", body: try JSONEncoder().encode(transaction))
        guard let signed = reply["signedTransaction"] as? String else { throw ClusterError("apple-sim did not sign: \(reply)") }
        return signed
    }

    /// Has apple-sim play a player with two years of history (`SimulatedPlayer`); returns its transaction ids.
    package func registerPlayer(_ player: SimulatedPlayer) async throws -> [String] {
        let reply = try await control("/control/players", body: try JSONEncoder().encode(player))
        guard let ids = reply["transaction_ids"] as? [String] else { throw ClusterError("apple-sim did not play the player: \(reply)") }
        return ids
    }

    /// Has apple-sim play a subscription (renewals without the client, notifications as planned);
    /// returns its first period signed, as the app gets it.
    package func startSubscription(_ plan: SimulatedSubscription) async throws -> String {
        let reply = try await control("/control/subscriptions", body: try JSONEncoder().encode(plan))
        guard let signed = reply["signedTransaction"] as? String else { throw ClusterError("apple-sim did not start it: \(reply)") }
        return signed
    }

    /// Has apple-sim sign a notification about a registered transaction and deliver it to the
    /// intake `times` times (the same UUID); returns the intake's HTTP statuses.
    package func deliverNotification(type: String, transactionID: String, times: Int = 1) async throws -> [Int] {
        let order: [String: Any] = [
            "url": intakeURL + "/v1/notifications/apple", "type": type, "transaction_id": transactionID, "repeat": times,
        ]
        let reply = try await control("/control/notifications", body: try JSONSerialization.data(withJSONObject: order))
        guard let statuses = reply["statuses"] as? [Int] else { throw ClusterError("apple-sim did not deliver: \(reply)") }
        return statuses
    }

    /// Has apple-sim sign a notification about a registered transaction and send it as Apple
    /// does: to the notification URL (`setNotificationDelivery`), retried on its schedule until
    /// delivered; `times` sends at once (Apple's duplicates, one UUID). Returns its UUID at once.
    @discardableResult
    package func sendNotification(type: String, transactionID: String, times: Int = 1) async throws -> String {
        let order: [String: Any] = ["type": type, "transaction_id": transactionID, "repeat": times]
        let reply = try await control("/control/notifications", body: try JSONSerialization.data(withJSONObject: order))
        guard let uuid = reply["uuid"] as? String else { throw ClusterError("apple-sim did not send: \(reply)") }
        return uuid
    }

    /// Apple refunds a purchase and never tells (no notification, nothing in its notification
    /// history): only Get Refund History, asked by the notifiers' refund sweep, can find it.
    package func refundSilently(transactionID: String) async throws {
        try await controlNoContent("/control/refunds", body: try JSONSerialization.data(withJSONObject: ["transaction_id": transactionID]))
    }

    /// Every notification apple-sim signed, oldest first: its UUID, type, purchase and whether any
    /// attempt delivered it.
    package func sentNotifications() async throws -> [(uuid: String, type: String, originalTransactionID: String?, delivered: Bool)] {
        let reply = try await control("/control/sent-notifications", body: nil)
        return (reply["notifications"] as? [[String: Any]] ?? []).compactMap { item in
            guard let uuid = item["uuid"] as? String else { return nil }
            let original = item["original_transaction_id"] as? String
            return (uuid, item["type"] as? String ?? "", original?.isEmpty == false ? original : nil, item["delivered"] as? Bool ?? false)
        }
    }

    /// Where apple-sim sends notifications as Apple does (both environments; `nil`: nowhere), its
    /// waits before each retry and each attempt's deadline.
    package func setNotificationDelivery(url: String?, retryDelaysMs: [Int64]? = nil, timeoutMs: Int64 = 2000) async throws {
        var order: [String: Any] = [:]
        if let url { order["url"] = url }
        try await controlNoContent("/control/notification-url", body: try JSONSerialization.data(withJSONObject: order))
        if let retryDelaysMs {
            try await controlNoContent(
                "/control/notification-retries",
                body: try JSONSerialization.data(withJSONObject: ["delays_ms": retryDelaysMs, "timeout_ms": timeoutMs] as [String: Any]))
        }
    }

    /// Starts an outage of Apple's deliveries: apple-sim sends to a route the intake refuses (404,
    /// as after a deploy that broke the route) until every outage begun has ended.
    package func beginNotificationOutage() async throws {
        notificationOutages += 1
        if notificationOutages == 1 { try await setNotificationDelivery(url: intakeURL + "/v1/notifications/apple-outage") }
    }

    /// Ends one outage; the last one gives apple-sim the intake's notification URL back.
    package func endNotificationOutage() async throws {
        notificationOutages = max(notificationOutages - 1, 0)
        if notificationOutages == 0 { try await setNotificationDelivery(url: intakeURL + "/v1/notifications/apple") }
    }

    private func controlNoContent(_ path: String, body: Data) async throws {
        var request = HTTPClientRequest(url: appleURL + path)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: body))
        let response = try await controlClient.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard (200...204).contains(response.status.code) else {
            throw ClusterError("apple-sim \(path) answered \(response.status): \(String(buffer: bytes).prefix(200))")
        }
    }

    /// The most Server API calls apple-sim received in any one second, per "environment endpoint".
    package func busiestAPISecond() async throws -> [String: Int] {
        let reply = try await control("/control/api-calls", body: nil)
        return reply["busiest_second"] as? [String: Int] ?? [:]
    }

    private func control(_ path: String, body: Data?) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: appleURL + path)
        if let body {
            request.method = .POST
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: body))
        }
        let response = try await controlClient.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok,
              let object = try JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any]
        else { throw ClusterError("apple-sim \(path) answered \(response.status): \(String(buffer: bytes).prefix(200))") }
        return object
    }
}

extension LocalCluster {
    /// The shape of apple-sim's next retention performance tests (Apple's: 100 requests, 10 at a time).
    package func configureRetentionTest(totalRequests: Int, maxConcurrentRequests: Int) async throws {
        let body = try JSONSerialization.data(withJSONObject: [
            "total_requests": totalRequests, "max_concurrent_requests": maxConcurrentRequests,
        ])
        var request = HTTPClientRequest(url: appleURL + "/control/retention-performance")
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: body))
        let response = try await controlClient.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 16)
        guard response.status == .ok else { throw ClusterError("apple-sim /control/retention-performance answered \(response.status)") }
    }

    /// How many purchases the books hold for `user` (every bucket's index of their purchases).
    package func grantedCount(user: String) async throws -> Int {
        let replies = try await pipeline(keys.everyBucket.map { RedisCommand("ZCARD", $0.purchases(user: user)) }, onNodeAt: redisPort)
        return replies.reduce(0) { $0 + Int($1.int ?? 0) }
    }
}
