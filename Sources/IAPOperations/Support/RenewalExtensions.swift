import AppleJWS
import AppleReceipt
import AppStoreServerAPI
import Foundation
import IAPSettings
import IAPStages
import Logging
import PipelineCore
import PlainJSON

/// Renewal-date extensions (`iapctl apple extend`): one subscriber's (Extend a Subscription Renewal
/// Date) or every active subscriber's of a product (Extend Subscription Renewal Dates for All
/// Active Subscribers, and its status). Apple tells each extended subscriber `RENEWAL_EXTENDED`;
/// for one subscriber the pipeline does not wait for it: once Apple answers `success`, the
/// subscription's latest transaction is read again (Get Transaction Info, verified) and stored as
/// that `RENEWAL_EXTENDED` (UUID `renewal-extension:<original>:<request identifier>`, once), so the
/// notify stage moves the record's `expires_at` and writes the `renewal_extended` event now.
package struct RenewalExtensions: Sendable {
    package let store: PipelineStore
    /// One client per app, asked in turn while Apple does not know the subscription.
    package let clients: [ServerAPIClient]
    package let signedData: SignedDataVerifier
    package let ticketTTL: Duration

    package init(store: PipelineStore, clients: [ServerAPIClient], signedData: SignedDataVerifier, ticketTTL: Duration) {
        self.store = store
        self.clients = clients
        self.signedData = signedData
        self.ticketTTL = ticketTTL
    }

    /// The `source` of what an extension stores (on its `notification` entry).
    package static let source = "renewal_extension"

    /// Why Apple did not extend: its error code (`apple_api_error_4030005`, …) and message, or why it
    /// could not be asked (`transient`: try again).
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package var code: String
        package var message: String
        package var transient: Bool
        package var description: String { "\(code): \(message)" }
    }

    /// One subscriber extended: Apple's new renewal date, and the ticket that applies it here (`nil`
    /// when the books hold no such subscription: Apple's RENEWAL_EXTENDED will find none either).
    package struct Extended: Sendable {
        package var originalTransactionID: String
        package var environment: String
        package var effectiveDate: Int64?
        package var ticket: String?

        package var json: JSONValue {
            .members([
                "original_transaction_id": .string(originalTransactionID), "environment": .string(environment),
                "effective_date": effectiveDate.map { .int($0) }, "ticket": ticket.map(JSONValue.string),
            ])
        }
    }

    package func extend(
        originalTransactionID original: String, days: Int, reason: Int, requestIdentifier: String, logger: Logger
    ) async -> Result<Extended, Failure> {
        let record: [String: String]
        do {
            record = try await store.redis.send("HGETALL", store.keys.subscription(originalTransactionID: original)).stringDictionary
        } catch {
            return .failure(Failure(code: "redis_unavailable", message: "the subscription's record cannot be read: \(error)", transient: true))
        }
        let known = record["environment"].flatMap(ServerAPIEnvironment.init(rawValue:))
        let environments = known.map { [$0] } ?? ServerAPIEnvironment.allCases
        let request = RenewalExtension(extendByDays: days, extendReasonCode: reason, requestIdentifier: requestIdentifier)
        for client in clients {
            for environment in environments {
                let answer = await client.extendRenewalDate(originalTransactionID: original, request, environment: environment)
                switch answer {
                case .ok(let bytes):
                    let body = try? JSONValue(parsing: bytes)
                    guard body?["success"]?.bool == true else {
                        return .failure(Failure(code: "extension_failed", message: "Apple answered success false", transient: false))
                    }
                    var extended = Extended(
                        originalTransactionID: original, environment: environment.rawValue, effectiveDate: body?["effectiveDate"]?.int64)
                    if !record.isEmpty {
                        switch await apply(original: original, latest: record["latest_transaction_id"] ?? original,
                                           environment: environment, client: client, requestIdentifier: requestIdentifier)
                        {
                        case .success(let ticket): extended.ticket = ticket
                        case .failure(let failure):
                            logger.warning("extended at Apple; not applied here yet (Apple's RENEWAL_EXTENDED will)", metadata: [
                                "original_transaction_id": "\(original)", "error": "\(failure)",
                            ])
                        }
                    }
                    return .success(extended)
                case .notFound, .refused(4_040_005, _):
                    continue
                default:
                    return .failure(Self.failure(answer))
                }
            }
        }
        return .failure(Failure(code: "subscription_not_found", message: "Apple knows no subscription \(original) for any app", transient: false))
    }

    /// The latest transaction, read again and verified, stored as RENEWAL_EXTENDED.
    private func apply(
        original: String, latest: String, environment: ServerAPIEnvironment, client: ServerAPIClient, requestIdentifier: String
    ) async -> Result<String, Failure> {
        let answer = await client.transactionInfo(latest, environment: environment)
        guard case .ok(let bytes) = answer else { return .failure(Self.failure(answer)) }
        guard let jws = (try? JSONValue(parsing: bytes))?["signedTransactionInfo"]?.string else {
            return .failure(Failure(code: "apple_api_bad_response", message: "no signedTransactionInfo", transient: true))
        }
        let transaction: JWSTransaction
        do {
            transaction = try await signedData.verify(jws, as: JWSTransaction.self)
        } catch {
            return .failure(Failure(code: "invalid_signature", message: error.description, transient: false))
        }
        guard transaction.originalTransactionID == original else {
            return .failure(Failure(code: "invalid_signature", message: "Apple's answer is about another subscription", transient: false))
        }
        do {
            return .success(try await store.acceptFound(
                transaction, as: .renewalExtended, uuid: "renewal-extension:\(original):\(requestIdentifier)",
                signedDate: transaction.signedDate, source: Self.source, ttl: ticketTTL).ticket)
        } catch {
            return .failure(Failure(code: "redis_unavailable", message: "\(error)", transient: true))
        }
    }

    /// Every active subscriber of `productID` (in `storefronts`, ISO 3166-1 alpha-3; `nil`: all):
    /// Apple's `requestIdentifier` once it took the request. The first app's key, unless `bundleID` names one.
    package func extendAll(
        productID: String, storefronts: [String]?, days: Int, reason: Int, requestIdentifier: String, environment: ServerAPIEnvironment,
        bundleID: String? = nil
    ) async -> Result<String, Failure> {
        guard let client = client(bundleID) else {
            return .failure(Failure(code: "server_api_not_configured", message: "no Server API key for \(bundleID ?? "any app")", transient: false))
        }
        let request = RenewalExtension(
            extendByDays: days, extendReasonCode: reason, requestIdentifier: requestIdentifier, productId: productID,
            storefrontCountryCodes: storefronts)
        let answer = await client.extendRenewalDates(request, environment: environment)
        guard case .ok(let bytes) = answer else { return .failure(Self.failure(answer)) }
        return .success((try? JSONValue(parsing: bytes))?["requestIdentifier"]?.string ?? requestIdentifier)
    }

    /// How far Apple got with an extension of every active subscriber.
    package struct MassStatus: Sendable, Equatable {
        package var requestIdentifier: String
        package var complete: Bool
        package var completeDate: Int64?
        package var succeededCount: Int64?
        package var failedCount: Int64?

        package init(requestIdentifier: String, complete: Bool, completeDate: Int64? = nil, succeededCount: Int64? = nil, failedCount: Int64? = nil) {
            self.requestIdentifier = requestIdentifier
            self.complete = complete
            self.completeDate = completeDate
            self.succeededCount = succeededCount
            self.failedCount = failedCount
        }

        package var json: JSONValue {
            .members([
                "request_identifier": .string(requestIdentifier), "complete": .bool(complete), "complete_date": completeDate.map { .int($0) },
                "succeeded_count": succeededCount.map { .int($0) }, "failed_count": failedCount.map { .int($0) },
            ])
        }
    }

    package func status(
        productID: String, requestIdentifier: String, environment: ServerAPIEnvironment, bundleID: String? = nil
    ) async -> Result<MassStatus, Failure> {
        guard let client = client(bundleID) else {
            return .failure(Failure(code: "server_api_not_configured", message: "no Server API key for \(bundleID ?? "any app")", transient: false))
        }
        let answer = await client.renewalExtensionStatus(productID: productID, requestIdentifier: requestIdentifier, environment: environment)
        guard case .ok(let bytes) = answer, let body = try? JSONValue(parsing: bytes) else { return .failure(Self.failure(answer)) }
        return .success(MassStatus(
            requestIdentifier: body["requestIdentifier"]?.string ?? requestIdentifier, complete: body["complete"]?.bool ?? false,
            completeDate: body["completeDate"]?.int64, succeededCount: body["succeededCount"]?.int64,
            failedCount: body["failedCount"]?.int64))
    }

    private func client(_ bundleID: String?) -> ServerAPIClient? {
        guard let bundleID else { return clients.first }
        return clients.first { $0.configuration.bundleID == bundleID }
    }

    static func failure(_ answer: ServerAPIAnswer) -> Failure {
        switch answer {
        case .ok: return Failure(code: "apple_api_bad_response", message: "Apple's answer is not what Apple documents", transient: true)
        case .notFound: return Failure(code: "transaction_not_found", message: "Apple knows no such transaction", transient: false)
        case .refused(let code, let detail): return Failure(code: ReasonCode.appleAPIError(code), message: detail, transient: false)
        case .unauthorized(_, let detail): return Failure(code: ReasonCode.appleAPIUnauthorized, message: detail, transient: false)
        case .misconfigured(let detail): return Failure(code: ReasonCode.appleAPIMisconfigured, message: detail, transient: false)
        case .transient(let reason, let detail, _): return Failure(code: reason, message: detail, transient: true)
        }
    }
}

extension RenewalExtensions {
    /// From the pipeline's settings (every app's key); `nil` without Server API keys. Shut its clients down after use.
    package static func make(_ configuration: PipelineConfiguration, store: PipelineStore, logger: Logger) throws(ConfigurationError) -> RenewalExtensions? {
        guard let tools = try ServerAPITools(configuration, store: store, logger: logger) else { return nil }
        return RenewalExtensions(store: store, clients: tools.clients, signedData: tools.signedData, ticketTTL: configuration.ticketTTL)
    }
}
