import AppleJWS
import AppStoreServerAPI
import Foundation
import IAPSettings
import IAPStages
import Logging
import PipelineCore

/// `iapctl apple test-notification`: asks Apple for a test notification (Request a Test
/// Notification), then reads its status (Get Test Notification Status) until Apple reports an
/// attempt, verifies the `TEST` notification it names, and looks for it where the intake stores
/// notifications. It arrived when Apple's attempt succeeded and the intake stored it.
package struct TestNotificationProbe: Sendable {
    package let client: ServerAPIClient
    package let signedData: SignedDataVerifier
    package let store: PipelineStore

    package struct Attempt: Encodable, Sendable, Equatable {
        package var attemptDate: Int64?
        package var sendAttemptResult: String?

        enum CodingKeys: String, CodingKey {
            case attemptDate = "attempt_date"
            case sendAttemptResult = "send_attempt_result"
        }
    }

    package struct Outcome: Encodable, Sendable, Equatable {
        /// `stored` (arrived and stored: the only success), `not_stored` (Apple says it was sent,
        /// the intake has no trace), `failed` (Apple's attempt failed: `attempts` says why),
        /// `no_attempt` (Apple reported none within the wait).
        package var result: String
        package var environment: String
        package var token: String
        package var notificationUUID: String?
        package var attempts: [Attempt]
        package var ticket: String?
        package var ticketStatus: String?

        package var arrived: Bool { result == "stored" }

        enum CodingKeys: String, CodingKey {
            case result, environment, token, attempts, ticket
            case notificationUUID = "notification_uuid"
            case ticketStatus = "ticket_status"
        }
    }

    /// Why the probe could not even ask (Apple refused the request, or answered what it cannot read).
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package func run(
        environment: ServerAPIEnvironment, wait: Duration, poll: Duration = .seconds(1)
    ) async throws -> Outcome {
        let token = try Self.field("testNotificationToken", of: try Self.body(await client.requestTestNotification(environment: environment)))
        let deadline = ContinuousClock.now + wait
        var signed: String?
        var attempts: [Attempt] = []
        while true {
            let status = try Self.body(await client.testNotificationStatus(token, environment: environment))
            signed = status["signedPayload"] as? String
            attempts = (status["sendAttempts"] as? [[String: Any]] ?? []).map {
                Attempt(attemptDate: ($0["attemptDate"] as? NSNumber)?.int64Value, sendAttemptResult: $0["sendAttemptResult"] as? String)
            }
            if !attempts.isEmpty || ContinuousClock.now >= deadline { break }
            // Apple offers no push for this: its status is read again after a pause.
            try await Task.sleep(for: poll)
        }
        var outcome = Outcome(
            result: "no_attempt", environment: environment.rawValue, token: token, notificationUUID: nil, attempts: attempts)
        if let signed {
            do {
                let payload = try await signedData.verify(signed, as: NotificationPayload.self)
                outcome.notificationUUID = payload.notificationUUID
            } catch {
                throw Failure(description: "the test notification Apple names does not verify: \(error)")
            }
        }
        if let uuid = outcome.notificationUUID, let ticket = try await store.notificationTicket(uuid: uuid) {
            outcome.ticket = ticket
            outcome.ticketStatus = try await store.ticket(ticket)?.status.rawValue
        }
        if outcome.ticket != nil {
            outcome.result = "stored"
        } else if attempts.contains(where: { $0.sendAttemptResult == "SUCCESS" }) {
            outcome.result = "not_stored"
        } else if !attempts.isEmpty {
            outcome.result = "failed"
        }
        return outcome
    }

    private static func body(_ answer: ServerAPIAnswer) throws -> [String: Any] {
        guard case .ok(let bytes) = answer else { throw Failure(description: "Apple answered \(answer)") }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw Failure(description: "Apple's answer is not a JSON object")
        }
        return object
    }

    private static func field(_ name: String, of object: [String: Any]) throws -> String {
        guard let value = object[name] as? String, !value.isEmpty else { throw Failure(description: "Apple's answer has no \(name)") }
        return value
    }
}

extension TestNotificationProbe {
    /// From the pipeline's settings, its Server API calls counted in the fleet's budget; `nil`
    /// without Server API keys. Shut its client down after use.
    package static func make(_ configuration: PipelineConfiguration, store: PipelineStore) throws(ConfigurationError) -> TestNotificationProbe? {
        guard let client = try configuration.serverAPIClient(store: store, logger: Logger(label: "iapctl")) else { return nil }
        return TestNotificationProbe(client: client, signedData: SignedDataVerifier(rootCertificates: try configuration.rootCertificates()), store: store)
    }

    /// Runs in `environment` (`production` or `sandbox`), then shuts the client down.
    package func runOnce(environment: String, wait: Duration) async throws -> Outcome {
        do {
            let outcome = try await run(environment: environment == "sandbox" ? .sandbox : .production, wait: wait)
            await client.shutdown()
            return outcome
        } catch {
            await client.shutdown()
            throw error
        }
    }
}
