import AppStoreServerAPI
import Foundation
import PlainJSON

/// The Retention Messaging API's setup, as `iapctl apple retention` makes it: each call's answer
/// (Apple's JSON, `{}` for a write), or why Apple did not take it; and the performance test run
/// to its end.
package struct RetentionSetup: Sendable {
    package let client: ServerAPIClient

    package init(client: ServerAPIClient) {
        self.client = client
    }

    /// Why a call did not succeed: `refused` (Apple's errorCode) or `unavailable` (Apple or our setup).
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package var refused: Bool
        package var message: String
        package var description: String { message }
    }

    /// Apple's body of a 2xx (`{}` when empty), or the failure.
    package static func outcome(_ answer: ServerAPIAnswer) -> Result<JSONValue, Failure> {
        switch answer {
        case .ok(let bytes):
            guard !bytes.isEmpty else { return .success(.object([:])) }
            guard let value = try? JSONValue(parsing: bytes) else {
                return .failure(Failure(refused: false, message: "Apple's answer is not JSON"))
            }
            return .success(value)
        case .notFound: return .failure(Failure(refused: true, message: "Apple found no such thing (404)"))
        case .refused(let code, let detail): return .failure(Failure(refused: true, message: "Apple refused (\(code)): \(detail)"))
        case .unauthorized(_, let detail): return .failure(Failure(refused: false, message: "Apple refused our key: \(detail)"))
        case .misconfigured(let detail): return .failure(Failure(refused: false, message: detail))
        case .transient(let reason, let detail, _): return .failure(Failure(refused: false, message: "\(reason): \(detail)"))
        }
    }

    /// Initiates Apple's performance test (sandbox: Apple sends real-time requests for
    /// `originalTransactionID` to the sandbox real-time URL) and reads its result every `poll`
    /// until it is no longer `PENDING` or `wait` has passed: the last result read.
    package func performanceTest(
        originalTransactionID: String, wait: Duration, poll: Duration = .seconds(2), clock: ContinuousClock = .init()
    ) async -> Result<JSONValue, Failure> {
        let started = Self.outcome(await client.initiatePerformanceTest(originalTransactionID: originalTransactionID))
        guard case .success(let answer) = started else { return started }
        guard let id = answer["requestId"]?.string else { return .failure(Failure(refused: false, message: "Apple named no requestId")) }
        let deadline = clock.now + wait
        while true {
            let read = Self.outcome(await client.performanceTestResult(id))
            switch read {
            case .success(let result) where result["result"]?.string != "PENDING" || clock.now >= deadline:
                return read.map { Self.named(id, $0) }
            case .failure(let failure) where failure.refused || clock.now >= deadline:
                return read
            default:
                break  // pending, or Apple (or the fleet's budget) not answering now: read again
            }
            try? await Task.sleep(for: poll, clock: clock)  // Apple's progress, read as its sample clients do
        }
    }

    static func named(_ id: String, _ result: JSONValue) -> JSONValue {
        guard var object = result.object else { return result }
        object["requestId"] = .string(id)
        return .object(object)
    }
}
