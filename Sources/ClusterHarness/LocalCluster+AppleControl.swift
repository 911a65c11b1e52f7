import AppleJWS
import AppleSimulator
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat

/// The cluster's apple-sim as the drill, the bench and the tests drive it: transactions made known
/// to its Server API (and signed, as StoreKit 2 gives them to the app), notifications delivered,
/// and the calls its Server API received.
extension LocalCluster {
    /// Registers a transaction with apple-sim's Server API; returns it signed.
    public func registerTransaction(_ transaction: JWSTransaction) async throws -> String {
        let reply = try await control("/control/transactions", body: try JSONEncoder().encode(transaction))
        guard let signed = reply["signedTransaction"] as? String else { throw ClusterError("apple-sim did not sign: \(reply)") }
        return signed
    }

    /// Has apple-sim play a subscription (renewals without the client, notifications as planned);
    /// returns its first period signed, as the app gets it.
    public func startSubscription(_ plan: SimulatedSubscription) async throws -> String {
        let reply = try await control("/control/subscriptions", body: try JSONEncoder().encode(plan))
        guard let signed = reply["signedTransaction"] as? String else { throw ClusterError("apple-sim did not start it: \(reply)") }
        return signed
    }

    /// Has apple-sim sign a notification about a registered transaction and deliver it to the
    /// intake `times` times (the same UUID); returns the intake's HTTP statuses.
    public func deliverNotification(type: String, transactionID: String, times: Int = 1) async throws -> [Int] {
        let order: [String: Any] = [
            "url": intakeURL + "/v1/notifications/apple", "type": type, "transaction_id": transactionID, "repeat": times,
        ]
        let reply = try await control("/control/notifications", body: try JSONSerialization.data(withJSONObject: order))
        guard let statuses = reply["statuses"] as? [Int] else { throw ClusterError("apple-sim did not deliver: \(reply)") }
        return statuses
    }

    /// The most Server API calls apple-sim received in any one second, per "environment endpoint".
    public func busiestAPISecond() async throws -> [String: Int] {
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
