import AppleJWS
import AppleReceipt
import AppStoreServerAPI
import Foundation
import IAPSettings
import IAPStages
import Logging
import PipelineCore
import PlainJSON

/// Refunds nobody reported: Get Refund History read for a customer (any transaction id of theirs,
/// every page), each refunded purchase's signature verified like any signed data, then read in the
/// books. With `apply`, each one not yet revoked or refunded here is taken back as a `REFUND`
/// notification would take it back (a grant revoked, a purchase never granted remembered as
/// refunded so it never will be): stored through `accept_notification` once per
/// transaction (its UUID `refund-history:<transaction id>`), applied by the notify stage's
/// `revoke_grant`, once, with `source` `refund_history`. The last revision read is kept per
/// asked transaction (`refund-revision:`), so `fromLastRevision` reads only what is new since.
package struct RefundHistoryAudit: Sendable {
    package let store: PipelineStore
    /// Gives each purchase its grant unit; without it only what is kept by transaction is read.
    package let catalog: ProductCatalog?
    /// One client per app, asked in turn: the first that knows the transaction answers.
    package let clients: [ServerAPIClient]
    package let signedData: SignedDataVerifier
    package let ticketTTL: Duration

    package init(store: PipelineStore, catalog: ProductCatalog?, clients: [ServerAPIClient], signedData: SignedDataVerifier, ticketTTL: Duration) {
        self.store = store
        self.catalog = catalog
        self.clients = clients
        self.signedData = signedData
        self.ticketTTL = ticketTTL
    }

    /// The `source` of a revocation found in the refund history (on its fulfilment entry).
    package static let source = "refund_history"

    /// The UUID a refund found in the history is stored under: one per transaction, whoever finds it.
    package static func notificationUUID(transactionID: String) -> String { "refund-history:\(transactionID)" }

    /// One refunded purchase: what Apple signed, where it stands in the books, and what `apply` did.
    package struct Refund: Sendable {
        package var transaction: JWSTransaction
        package var books: PurchaseBooks
        /// `revoking` (queued for the notify stage, `ticket`), `seen_before` (queued by an earlier
        /// run), `nothing_to_do` (revoked or refunded here already); `nil` without `apply`.
        package var action: String?
        package var ticket: String?

        package var json: JSONValue {
            var members = books.json.object ?? [:]
            members["revocation_date"] = transaction.revocationDate.map { .int($0) } ?? .null
            members["revocation_reason"] = transaction.revocationReason.map { .int($0) } ?? .null
            if let action { members["action"] = .string(action) }
            if let ticket { members["ticket"] = .string(ticket) }
            return .object(members)
        }
    }

    package struct Report: Sendable {
        package var asked: [String] = []
        /// Asked ids Apple knows for no app and environment (nothing to read for them).
        package var unknown: [String] = []
        package var refunds: [Refund] = []
        /// Every page of every asked customer was read.
        package var complete = true
        package var error: String?

        package var json: JSONValue {
            .members([
                "asked": .array(asked.map(JSONValue.string)), "unknown": .array(unknown.map(JSONValue.string)),
                "complete": .bool(complete), "error": error.map(JSONValue.string),
                "refunds": .array(refunds.map(\.json)),
            ])
        }
    }

    /// Reads the refund history of the customer of each of `transactionIDs` (the same refund found
    /// twice is listed once) and, with `apply`, revokes what is still granted.
    package func audit(transactionIDs: [String], apply: Bool, fromLastRevision: Bool = false, logger: Logger) async -> Report {
        var report = Report()
        var seen: Set<String> = []
        for asked in transactionIDs {
            report.asked.append(asked)
            let read = await refunds(of: asked, fromLastRevision: fromLastRevision)
            switch read {
            case .failure(let failure) where failure.unknown:
                report.unknown.append(asked)
            case .failure(let failure):
                report.complete = false
                report.error = "\(asked): \(failure.message)"
                return report
            case .success(let found):
                for transaction in found where seen.insert(transaction.transactionID).inserted {
                    do {
                        var refund = Refund(
                            transaction: transaction,
                            books: try await store.books(
                                of: InAppTransaction(signed: transaction), environment: transaction.environment ?? "",
                                unit: catalog?.grantUnit(for: InAppTransaction(signed: transaction))))
                        if apply { try await revoke(&refund, logger: logger) }
                        report.refunds.append(refund)
                    } catch {
                        report.complete = false
                        report.error = "the books cannot be read or written right now: \(error)"
                        return report
                    }
                }
            }
        }
        return report
    }

    /// Queues the refund's revocation unless the books say there is nothing to take back.
    private func revoke(_ refund: inout Refund, logger: Logger) async throws {
        // As Apple's REFUND would: a grant is taken back, a purchase not granted (yet) is
        // remembered as refunded so that it never will be; what is revoked or refunded stays.
        guard !["revoked", "refunded"].contains(refund.books.state) else {
            refund.action = "nothing_to_do"
            return
        }
        let transaction = refund.transaction
        let stored = try await store.acceptFound(
            transaction, as: .refund, uuid: Self.notificationUUID(transactionID: transaction.transactionID),
            signedDate: transaction.revocationDate ?? transaction.signedDate, source: Self.source, ttl: ticketTTL)
        refund.action = stored.created ? "revoking" : "seen_before"
        refund.ticket = stored.ticket
        logger.info("refund found in the history: revocation queued", metadata: [
            "transaction_id": "\(transaction.transactionID)", "ticket": "\(stored.ticket)", "new": "\(stored.created)",
        ])
    }

    /// Every refunded transaction of the customer of `transactionID`, verified; the first app and
    /// environment that knows the id answers.
    private func refunds(of transactionID: String, fromLastRevision: Bool) async -> Result<[JWSTransaction], AuditError> {
        for client in clients {
            for environment in ServerAPIEnvironment.allCases {
                var revision: String? = fromLastRevision ? try? await store.refundRevision(asked: transactionID, environment: environment) : nil
                var found: [JWSTransaction] = []
                var knows = true
                while true {
                    let answer = await client.refundHistory(transactionID, revision: revision, environment: environment)
                    switch answer {
                    case .ok(let bytes):
                        guard let page = try? JSONDecoder().decode(Page.self, from: Data(bytes)) else {
                            return .failure(AuditError("Apple's refund history is not what Apple documents"))
                        }
                        for jws in page.signedTransactions ?? [] {
                            do {
                                found.append(try await signedData.verify(jws, as: JWSTransaction.self))
                            } catch {
                                return .failure(AuditError("a refunded transaction Apple sent does not verify (\(error)): nothing applied"))
                            }
                        }
                        revision = page.revision
                        guard page.hasMore == true, page.revision != nil else { break }
                        continue
                    case .notFound:
                        knows = false
                    default:
                        return .failure(AuditError("\(answer)"))
                    }
                    break
                }
                guard knows else { continue }
                if let revision { try? await store.setRefundRevision(revision, asked: transactionID, environment: environment) }
                return .success(found)
            }
        }
        return .failure(AuditError("Apple knows no transaction \(transactionID) (any app, production or sandbox)", unknown: true))
    }

    struct AuditError: Error {
        var message: String
        /// Apple knows no such transaction: nothing to read, not a failure to read.
        var unknown = false
        init(_ message: String, unknown: Bool = false) {
            self.message = message
            self.unknown = unknown
        }
    }

    struct Page: Decodable {
        var signedTransactions: [String]?
        var revision: String?
        var hasMore: Bool?
    }
}

extension RefundHistoryAudit {
    /// The most customers asked for one user (`--user`): each costs at least one call to Apple.
    package static let maxAskedPerUser = 50

    /// A transaction id of each purchase the books hold for `user` (the original transaction ids of
    /// their grants, non-consumables and subscriptions), to ask Refund History with: a user may
    /// have bought on several Apple Accounts. At most `maxAskedPerUser`, newest grants first.
    package func transactionIDs(ofUser user: String) async throws -> [String] {
        let report = try await store.userReport(user: user, catalog: nil)
        var ids: [String] = []
        for entry in report.timeline.reversed() where ["granted", "renewed", "released", "adopted"].contains(entry["event"] ?? "") {
            if let original = entry["original_transaction_id"], !original.isEmpty, !ids.contains(original) { ids.append(original) }
        }
        for original in report.lifetime + report.subscriptions.keys.sorted() where !ids.contains(original) { ids.append(original) }
        return Array(ids.prefix(Self.maxAskedPerUser))
    }

    /// From the pipeline's settings (every app's key); `nil` without Server API keys. Shut its clients down after use.
    package static func make(
        _ configuration: PipelineConfiguration, store: PipelineStore, logger: Logger
    ) throws(ConfigurationError) -> RefundHistoryAudit? {
        guard let tools = try ServerAPITools(configuration, store: store, logger: logger) else { return nil }
        return RefundHistoryAudit(
            store: store, catalog: tools.catalog, clients: tools.clients, signedData: tools.signedData, ticketTTL: configuration.ticketTTL)
    }
}
