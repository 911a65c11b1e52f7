import AppleJWS
import Foundation
import Hummingbird

/// Apple's side of notifications as apple-sim plays it: every notification it signs is kept with
/// its send attempts; "sending" one goes to the environment's notification URL and, when that
/// fails, again on Apple's retry schedule (1, 12, 24, 48 and 72 hours after the previous attempt,
/// compressible for drills and tests) — except after an HTTP 400, which Apple no longer retries;
/// Get Notification History serves what was kept, 20 a page, filtered as Apple filters.
extension SimulatedServerAPI {
    /// Apple's retry schedule: the waits before the 2nd … 6th attempt.
    public static let appleRetryDelays: [Duration] = [1, 12, 24, 48, 72].map { .seconds($0 * 3600) }
    static let historyPageSize = 20

    struct SentNotification {
        var uuid: String
        var type: String
        var subtype: String?
        var environment: String
        var originalTransactionID: String?
        /// When Apple made it (its `signedDate`), UNIX ms: what the history's dates select on.
        var date: Int64
        var signedPayload: String
        /// (when, ms; `sendAttemptResult`)
        var attempts: [(Int64, String)] = []

        var delivered: Bool { attempts.contains { $0.1 == "SUCCESS" } }
    }

    /// Keeps a signed notification for the history.
    func keep(_ payload: NotificationPayload, signed: String, originalTransactionID: String?) {
        let sent = SentNotification(
            uuid: payload.notificationUUID, type: payload.notificationType, subtype: payload.subtype,
            environment: payload.data?.environment ?? payload.summary?.environment ?? payload.appData?.environment ?? "Production",
            originalTransactionID: originalTransactionID, date: payload.signedDate ?? Int64(Date().timeIntervalSince1970 * 1000),
            signedPayload: signed)
        state.withLockedValue { state in
            if state.sent[sent.uuid] == nil { state.sentOrder.append(sent.uuid) }
            state.sent[sent.uuid] = sent
        }
    }

    func recordAttempt(_ uuid: String, result: String) {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        state.withLockedValue { $0.sent[uuid]?.attempts.append((now, result)) }
    }

    /// The waits before each retry (Apple's, or shorter for a drill; `[]`: no retries) and each
    /// attempt's deadline.
    public func setRetryDelays(_ delays: [Duration], timeout: Duration = .seconds(10)) {
        state.withLockedValue { state in
            state.retryDelays = delays
            state.deliveryTimeout = timeout
        }
    }

    /// Sends a kept notification as Apple does: to its environment's notification URL (none set:
    /// nothing is sent, the history shows no attempt), retried on the schedule until one attempt
    /// succeeds, the schedule ends or the answer is HTTP 400. `lossRate`: the share of attempts lost
    /// on the way (recorded `NO_RESPONSE`, never reaching the URL). Returns at once.
    public func send(uuid: String, lossRate: Double = 0) {
        Task.detached { await self.deliverWithRetries(uuid: uuid, lossRate: lossRate) }
    }

    func deliverWithRetries(uuid: String, lossRate: Double) async {
        var attempt = 0
        while true {
            let (found, url, delays, timeout) = state.withLockedValue { state in
                (state.sent[uuid], state.sent[uuid].flatMap { state.notificationURLs[$0.environment] }, state.retryDelays, state.deliveryTimeout)
            }
            guard let found, let url else { return }
            let result: String
            var retry = true
            if lossRate > 0, Double.random(in: 0..<1) < lossRate {
                result = "NO_RESPONSE"
            } else {
                do {
                    let status = try await Self.deliver(found.signedPayload, to: url, timeout: timeout)
                    result = (200...206).contains(status) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
                    // Since March 2026 Apple is reported not to retry after a 400.
                    retry = status != 400
                } catch {
                    result = "NO_RESPONSE"
                }
            }
            recordAttempt(uuid, result: result)
            guard result != "SUCCESS", retry, attempt < delays.count else { return }
            try? await Task.sleep(for: delays[attempt])
            attempt += 1
        }
    }

    /// Every notification kept, oldest first: (uuid, type, delivered, attempts).
    public func sentNotifications() -> [(uuid: String, type: String, delivered: Bool, attempts: Int)] {
        state.withLockedValue { state in
            state.sentOrder.compactMap { state.sent[$0] }.map { ($0.uuid, $0.type, $0.delivered, $0.attempts.count) }
        }
    }

    /// `NotificationHistoryRequest`.
    struct HistoryRequest: Decodable {
        var startDate: Int64?
        var endDate: Int64?
        var notificationType: String?
        var notificationSubtype: String?
        var transactionId: String?
        var onlyFailures: Bool?
    }

    /// `POST /inApps/v1/notifications/history?paginationToken=…`.
    func notificationHistory(body: Data, paginationToken: String?, environment: String) -> Response {
        func refuse(_ code: Int, _ message: String) -> Response {
            (try? Self.json(.badRequest, ["errorCode": code, "errorMessage": message])) ?? Response(status: .badRequest)
        }
        guard let request = try? JSONDecoder().decode(HistoryRequest.self, from: body) else {
            return refuse(4_000_000, "Invalid request.")
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        guard let start = request.startDate, start >= 0 else { return refuse(4_000_015, "Invalid request. The start date is not a timestamp value represented in milliseconds.") }
        guard let requestedEnd = request.endDate, requestedEnd >= 0 else { return refuse(4_000_016, "Invalid request. The end date is not a timestamp value represented in milliseconds.") }
        guard start >= now - 180 * 86_400_000 else { return refuse(4_000_012, "Invalid request. The start date is earlier than the allowed start date.") }
        guard requestedEnd > start else { return refuse(4_000_013, "Invalid request. The end date precedes the start date or the dates are the same.") }
        if request.transactionId != nil && request.notificationType != nil {
            return refuse(4_000_019, "Invalid request. Supply either a transaction id or a notification type, but not both.")
        }
        if request.notificationSubtype != nil && request.notificationType == nil {
            return refuse(4_000_018, "Invalid request. A notification subtype needs its notification type.")
        }
        let end = min(requestedEnd, now)
        var offset = 0
        if let paginationToken {
            guard let value = Int(paginationToken.dropFirst("page-".count)), paginationToken.hasPrefix("page-"), value >= 0 else {
                return refuse(4_000_014, "Invalid request. The pagination token is invalid.")
            }
            offset = value
        }
        let matching: [SentNotification] = state.withLockedValue { state in
            let customer = request.transactionId.map { id in state.transactions[id]?.originalTransactionID ?? id }
            return state.sentOrder.compactMap { state.sent[$0] }.filter { sent in
                sent.environment == environment && sent.date >= start && sent.date < end
                    && (request.notificationType == nil || sent.type == request.notificationType)
                    && (request.notificationSubtype == nil || sent.subtype == request.notificationSubtype)
                    && (customer == nil || sent.originalTransactionID == customer)
                    && (request.onlyFailures != true || !sent.delivered)
            }.sorted { ($0.date, $0.uuid) < ($1.date, $1.uuid) }
        }
        let page = matching.dropFirst(offset).prefix(Self.historyPageSize)
        let next = offset + page.count
        let items: [[String: any Sendable]] = page.map { sent in
            [
                "signedPayload": sent.signedPayload,
                "sendAttempts": sent.attempts.map { ["attemptDate": $0.0, "sendAttemptResult": $0.1] as [String: any Sendable] },
            ]
        }
        return (try? Self.json(.ok, [
            "notificationHistory": items, "hasMore": next < matching.count, "paginationToken": "page-\(next)",
        ])) ?? Response(status: .internalServerError)
    }
}
