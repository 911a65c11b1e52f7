import AppleJWS
import Foundation
import Hummingbird

/// Request a Test Notification and Get Test Notification Status, as Apple plays them: the request
/// answers a token at once and sends a signed `TEST` notification to the environment's
/// notification URL; the status gives that notification and the attempt's result.
extension SimulatedServerAPI {
    struct TestNotification {
        var environment: String
        var signedPayload: String
        /// (when, ms; `sendAttemptResult`)
        var attempts: [(Int64, String)] = []
    }

    /// `POST /control/notification-url`: where notifications go (both environments unless one is named).
    struct NotificationURLOrder: Decodable {
        var url: String?
        var environment: String?
    }

    /// Where notifications of `environment` (`Production`, `Sandbox`) are sent; `nil`: nowhere.
    public func setNotificationURL(_ url: String?, environment: String) {
        state.withLockedValue { $0.notificationURLs[environment] = url }
    }

    func requestTestNotification(environment: String) -> Response {
        let token = UUID().uuidString.lowercased() + "_" + String(Int64(Date().timeIntervalSince1970 * 1000))
        let payload = NotificationPayload(
            notificationType: "TEST", notificationUUID: UUID().uuidString.lowercased(), signedDate: Int64(Date().timeIntervalSince1970 * 1000),
            data: .init(bundleID: "com.example.game", environment: environment, signedTransactionInfo: nil))
        guard let signed = try? authority.signer.sign(payload: payload) else {
            return (try? Self.json(.internalServerError, ["errorCode": 5_000_000, "errorMessage": "An unknown error occurred."]))
                ?? Response(status: .internalServerError)
        }
        keep(payload, signed: signed, originalTransactionID: nil)
        let url = state.withLockedValue { state in
            state.testNotifications[token] = TestNotification(environment: environment, signedPayload: signed)
            return state.notificationURLs[environment]
        }
        if let url {
            Task {
                let result: String
                do {
                    let status = try await Self.deliver(signed, to: url)
                    result = (200...206).contains(status) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
                } catch {
                    result = "NO_RESPONSE"
                }
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                self.state.withLockedValue { $0.testNotifications[token]?.attempts.append((now, result)) }
                self.recordAttempt(payload.notificationUUID, result: result)
            }
        }
        return (try? Self.json(.ok, ["testNotificationToken": token])) ?? Response(status: .internalServerError)
    }

    func testNotificationStatus(_ token: String, environment: String) -> Response {
        let found = state.withLockedValue { $0.testNotifications[token] }
        guard let found, found.environment == environment else {
            return (try? Self.json(.notFound, ["errorCode": 4_040_008, "errorMessage": "Test notification not found."]))
                ?? Response(status: .notFound)
        }
        let attempts: [[String: any Sendable]] = found.attempts.map { ["attemptDate": $0.0, "sendAttemptResult": $0.1] }
        return (try? Self.json(.ok, ["signedPayload": found.signedPayload, "sendAttempts": attempts])) ?? Response(status: .internalServerError)
    }
}
