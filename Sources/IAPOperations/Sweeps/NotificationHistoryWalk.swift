import AppStoreServerAPI
import Foundation
import IAPSettings
import IAPStages
import Logging
import PipelineCore

/// Reads Get Notification History page by page and puts every `signedPayload` through the
/// intake's own admission (`NotificationAdmission`): what is stored already is `seen_before`, so a
/// walk can be repeated at no cost but Apple's calls. `iapctl apple notifications backfill` and
/// the standing sweep both walk with it.
package struct NotificationHistoryWalk: Sendable {
    package let client: ServerAPIClient
    package let admission: NotificationAdmission
    package let logger: Logger

    /// One notification the admission refused.
    package struct Invalid: Encodable, Sendable, Equatable {
        package var code: String
        package var message: String
    }

    /// What a walk did. It is `complete` when it read the last page; otherwise `error` says why it
    /// stopped and the counts say how far it got.
    package struct Report: Encodable, Sendable, Equatable {
        package var environment: String
        package var startDate: Int64
        package var endDate: Int64
        package var pages = 0
        /// Notifications Apple listed.
        package var seen = 0
        /// Stored by this walk: lost until now.
        package var new = 0
        /// Stored before (`seen_before`).
        package var seenBefore = 0
        /// Refused by the admission (never stored): a signature, a bundle id, an environment.
        package var invalid = 0
        /// The first 20 refusals.
        package var refusals: [Invalid] = []
        package var complete = false
        package var error: String?

        enum CodingKeys: String, CodingKey {
            case environment, pages, seen, new, invalid, refusals, complete, error
            case startDate = "start_date"
            case endDate = "end_date"
            case seenBefore = "seen_before"
        }
    }

    /// Walks every page of `query` in `environment`. `onPage` runs after each page (the sweep
    /// renews its lease there; throwing stops the walk with that error).
    package func run(
        _ query: NotificationHistoryQuery, environment: ServerAPIEnvironment,
        onPage: @Sendable (Report) async throws -> Void = { _ in }
    ) async -> Report {
        var report = Report(environment: environment.rawValue, startDate: query.startDate, endDate: query.endDate)
        var token: String?
        while true {
            let page: Page
            switch await client.notificationHistory(query, paginationToken: token, environment: environment) {
            case .ok(let bytes):
                do {
                    page = try JSONDecoder().decode(Page.self, from: Data(bytes))
                } catch {
                    report.error = "Apple's history page is not what Apple documents: \(error)"
                    return report
                }
            case let other:
                report.error = "Get Notification History: \(other)"
                return report
            }
            report.pages += 1
            // A page's notifications are independent: admitted at once (verification on every
            // core, Redis round trips overlapped), counted in the page's order.
            let items = page.notificationHistory ?? []
            let outcomes = await withTaskGroup(of: (Int, Admission).self) { group in
                for (index, item) in items.enumerated() {
                    group.addTask { (index, await admit(item.signedPayload)) }
                }
                var outcomes = [Admission](repeating: .new, count: items.count)
                for await (index, outcome) in group { outcomes[index] = outcome }
                return outcomes
            }
            for outcome in outcomes {
                report.seen += 1
                switch outcome {
                case .new: report.new += 1
                case .seenBefore: report.seenBefore += 1
                case .invalid(let refusal):
                    report.invalid += 1
                    record(&report, refusal)
                case .failed(let error):
                    report.error = "cannot store a notification: \(error)"
                }
            }
            if report.error != nil { return report }
            do {
                try await onPage(report)
            } catch {
                report.error = "\(error)"
                return report
            }
            guard page.hasMore == true else {
                report.complete = true
                return report
            }
            guard let next = page.paginationToken, !next.isEmpty, next != token else {
                report.error = "Apple said it has more but gave no new paginationToken"
                return report
            }
            token = next
        }
    }

    enum Admission: Sendable {
        case new, seenBefore, invalid(Invalid), failed(String)
    }

    /// One history item through the admission.
    private func admit(_ signed: String?) async -> Admission {
        guard let signed else { return .invalid(Invalid(code: "missing_signed_payload", message: "a history item without signedPayload")) }
        do {
            let admitted = try await admission.admit(signed, logger: logger)
            guard admitted.created else { return .seenBefore }
            logger.notice("a notification Apple could not deliver is stored from its history", metadata: [
                "type": "\(admitted.notification.type)", "uuid": "\(admitted.notification.uuid)", "ticket": "\(admitted.ticket)",
            ])
            return .new
        } catch let refusal as NotificationRefusal {
            return .invalid(Invalid(code: refusal.code.rawValue, message: refusal.message))
        } catch {
            return .failed("\(error)")
        }
    }

    private func record(_ report: inout Report, _ invalid: Invalid) {
        if report.refusals.count < 20 { report.refusals.append(invalid) }
    }

    /// `NotificationHistoryResponse`.
    struct Page: Decodable {
        var notificationHistory: [Item]?
        var hasMore: Bool?
        var paginationToken: String?

        struct Item: Decodable {
            var signedPayload: String?
        }
    }
}

extension NotificationHistoryWalk {
    /// From the pipeline's settings, its Server API calls counted in the fleet's budget; `nil`
    /// without Server API keys or bundle ids. Shut its client down after use.
    package static func make(
        _ configuration: PipelineConfiguration, store: PipelineStore, logger: Logger
    ) throws(ConfigurationError) -> NotificationHistoryWalk? {
        guard let admission = try NotificationAdmission.make(configuration, store: store),
              let client = try configuration.serverAPIClient(store: store, logger: logger)
        else { return nil }
        return NotificationHistoryWalk(client: client, admission: admission, logger: logger)
    }

    /// One walk per app with a Server API key (`IAP_APPS_FILE`; one app: the one walk), each with
    /// its app's key: Apple's history is per app. Shut each one's client down after use.
    package static func makeEach(
        _ configuration: PipelineConfiguration, store: PipelineStore, logger: Logger
    ) throws(ConfigurationError) -> [(bundleID: String, walk: NotificationHistoryWalk)] {
        guard let admission = try NotificationAdmission.make(configuration, store: store) else { return [] }
        return try configuration.serverAPIClients(store: store, logger: logger).map { app in
            (app.bundleID, NotificationHistoryWalk(client: app.client, admission: admission, logger: logger))
        }
    }
}
