import AsyncHTTPClient
import Foundation
import IAPClient
import NIOCore

/// What the load client sends: one user's evidence, a receipt unless `evidenceField` says
/// `signed_transaction` or `transaction_id`.
package protocol SubmittableReceipt: Sendable {
    var userID: String { get }
    var receiptData: String { get }
    var evidenceField: String { get }
}

extension SubmittableReceipt {
    package var evidenceField: String { "receipt_data" }
}

/// Submits receipts to the intake over HTTP, as a well-behaved client does: a 503 or a broken
/// connection means "send the same receipt again later".
package struct LoadClient: Sendable {
    package struct Submission: Sendable {
        /// The ticket the intake answered with; `nil` when it never accepted the receipt.
        package var ticket: String?
        /// 503s and connection failures before it was accepted.
        package var refusals = 0
        /// An answer no retry can fix (a 4xx).
        package var error: String?
        /// Wall-clock milliseconds when it was first sent, the start of its latency.
        package var sentAtMs: Double = 0

        package init() {}
    }

    let http: HTTPClient
    let intakeURL: String
    /// Signs every attempt anew (the intake checks signatures), each with a later timestamp than
    /// any identical request before it, so neither a retry nor a second submission of the same
    /// receipt is taken for a replay.
    let signer: RequestSigner?
    private let timestamps = SigningTimestamps()
    /// How long one receipt is retried before the client gives up on it.
    package var giveUpAfter: Duration = .seconds(120)

    package init(http: HTTPClient, intakeURL: String, signer: RequestSigner? = nil) {
        self.http = http
        self.intakeURL = intakeURL
        self.signer = signer
    }

    /// Sends every receipt, at most `concurrency` at a time; receipt i leaves no earlier than
    /// i / `rate` seconds after the start (`nil`: as fast as the concurrency allows).
    package func submitAll(_ receipts: [some SubmittableReceipt], perSecond rate: Int?, concurrency: Int) async -> [Submission] {
        var results = [Submission](repeating: Submission(), count: receipts.count)
        let start = ContinuousClock.now
        await withTaskGroup(of: (Int, Submission).self) { group in
            var running = 0
            for (index, receipt) in receipts.enumerated() {
                if let rate {
                    try? await Task.sleep(until: start + .seconds(Double(index) / Double(max(rate, 1))), clock: .continuous)
                }
                if running >= concurrency, let (done, result) = await group.next() {
                    results[done] = result
                    running -= 1
                }
                group.addTask { (index, await submit(receipt)) }
                running += 1
            }
            for await (index, result) in group { results[index] = result }
        }
        return results
    }

    package func submit(_ receipt: some SubmittableReceipt) async -> Submission {
        var submission = Submission()
        submission.sentAtMs = Date().timeIntervalSince1970 * 1000
        let body = try! JSONSerialization.data(withJSONObject: ["user_id": receipt.userID, receipt.evidenceField: receipt.receiptData])
        let deadline = ContinuousClock.now + giveUpAfter
        var backoffMs = 50
        while ContinuousClock.now < deadline {
            var request = HTTPClientRequest(url: intakeURL + "/v1/receipts")
            request.method = .POST
            request.headers.add(name: "content-type", value: "application/json")
            if let signer {
                let timestamp = timestamps.next(for: body)
                request.headers.add(contentsOf: signer.headers(method: "POST", target: "/v1/receipts", body: body, timestamp: timestamp))
            }
            request.body = .bytes(ByteBuffer(data: body))
            do {
                let response = try await http.execute(request, timeout: .seconds(10))
                let answer = try await response.body.collect(upTo: 1 << 20)
                switch response.status.code {
                case 200, 202:
                    let json = try? JSONSerialization.jsonObject(with: Data(buffer: answer)) as? [String: Any]
                    submission.ticket = json?["ticket"] as? String
                    if submission.ticket == nil { submission.error = "no ticket in \(String(buffer: answer))" }
                    return submission
                case 503:
                    submission.refusals += 1
                default:
                    submission.error = "HTTP \(response.status.code): \(String(buffer: answer))"
                    return submission
                }
            } catch {
                submission.refusals += 1
            }
            try? await Task.sleep(for: .milliseconds(backoffMs))
            backoffMs = min(backoffMs * 2, 1000)
        }
        submission.error = "not accepted within \(giveUpAfter)"
        return submission
    }
}
