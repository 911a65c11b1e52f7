import AsyncHTTPClient
import Foundation
import NIOCore

/// Submits a trial's receipts to the intake over HTTP at a steady rate, as a well-behaved client
/// does: a 503 or a broken connection means "send the same receipt again later".
struct LoadClient: Sendable {
    struct Submission: Sendable {
        /// The ticket the intake answered with; `nil` when it never accepted the receipt.
        var ticket: String?
        /// 503s and connection failures before it was accepted.
        var refusals = 0
        /// An answer no retry can fix (a 4xx): the drill's receipts are all well-formed.
        var error: String?
    }

    let http: HTTPClient
    let intakeURL: String
    /// How long one receipt is retried before the client gives up on it.
    var giveUpAfter: Duration = .seconds(120)

    func submitAll(_ plan: [PlannedReceipt], perSecond rate: Int, concurrency: Int) async -> [Submission] {
        var results = [Submission](repeating: Submission(), count: plan.count)
        let start = ContinuousClock.now
        await withTaskGroup(of: (Int, Submission).self) { group in
            var running = 0
            for receipt in plan {
                try? await Task.sleep(until: start + .seconds(Double(receipt.index) / Double(max(rate, 1))), clock: .continuous)
                if running >= concurrency, let (index, result) = await group.next() {
                    results[index] = result
                    running -= 1
                }
                group.addTask { (receipt.index, await submit(receipt)) }
                running += 1
            }
            for await (index, result) in group { results[index] = result }
        }
        return results
    }

    func submit(_ receipt: PlannedReceipt) async -> Submission {
        var submission = Submission()
        let body = try! JSONSerialization.data(withJSONObject: ["user_id": receipt.userID, "receipt_data": receipt.receiptData])
        let deadline = ContinuousClock.now + giveUpAfter
        var backoffMs = 50
        while ContinuousClock.now < deadline {
            var request = HTTPClientRequest(url: intakeURL + "/v1/receipts")
            request.method = .POST
            request.headers.add(name: "content-type", value: "application/json")
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
