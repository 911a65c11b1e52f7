import AppleJWS
import AppleReceipt
import AppStoreServerAPI
import Crypto
import IAPSettings
import IAPStages
import Logging
import PipelineCore
import PlainJSON

/// The support desk's look-ups: an order id from a customer's email receipt (Look Up Order ID)
/// or a transaction id (Get Transaction Info, production then sandbox), each purchase Apple signs
/// verified like any signed data, then read in the books (`PurchaseBooks`). Apple is asked within
/// the fleet's Server API budget. `iapctl lookup` and the intake's `/v1/support/…` routes use it.
package struct SupportLookup: Sendable {
    package let store: PipelineStore
    /// Gives each purchase its grant unit; without it only what is kept by transaction is read.
    package let catalog: ProductCatalog?
    /// One client per app (`IAP_APPS_FILE`), in the order apps are asked: an id Apple does not
    /// know with one app's key is asked with the next's.
    package let clients: [ServerAPIClient]
    package let signedData: SignedDataVerifier

    package init(store: PipelineStore, catalog: ProductCatalog?, clients: [ServerAPIClient], signedData: SignedDataVerifier) {
        precondition(!clients.isEmpty, "at least one app's client")
        self.store = store
        self.catalog = catalog
        self.clients = clients
        self.signedData = signedData
    }

    package init(store: PipelineStore, catalog: ProductCatalog?, client: ServerAPIClient, signedData: SignedDataVerifier) {
        self.init(store: store, catalog: catalog, clients: [client], signedData: signedData)
    }

    /// Shuts every app's client down.
    package func shutdown() async {
        for client in clients { await client.shutdown() }
    }

    /// What a look-up found: the order's (or the one transaction's) purchases and their books.
    package struct Answer: Sendable {
        package var orderID: String?
        package var purchases: [PurchaseBooks]

        package var json: JSONValue {
            .members(["order_id": orderID.map(JSONValue.string), "purchases": .array(purchases.map(\.json))])
        }
    }

    /// Why a look-up found nothing: a machine-readable code and what to tell the person asking.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package enum Kind: Sendable, Equatable {
            /// The id is not one Apple gives (400).
            case invalidID
            /// Apple knows no such order or transaction (404).
            case notFound
            /// Apple could not be asked, refused our key, or answered what does not verify (502/503).
            case apple(transient: Bool)
            /// The books could not be read (503).
            case redis
        }

        package var kind: Kind
        package var code: String
        package var message: String
        package var description: String { "\(code): \(message)" }
    }

    package func order(_ orderID: String) async -> Result<Answer, Failure> {
        guard ServerAPIOrderLookup.isWellFormed(orderID) else {
            return .failure(Failure(kind: .invalidID, code: "invalid_order_id", message: "an order id is 1 to 64 letters and digits"))
        }
        for client in clients {
            switch await ServerAPIOrderLookup(client: client, signedData: signedData).lookUp(orderID: orderID) {
            case .notFound:
                continue
            case .failed(let reason, let detail, let transient):
                return .failure(Self.appleFailure(reason: reason, detail: detail, transient: transient))
            case .found(let receipts):
                return await books(of: receipts, orderID: orderID)
            }
        }
        return .failure(Failure(kind: .notFound, code: "order_not_found", message: "Apple knows no order \(orderID)"))
    }

    package func transaction(_ transactionID: String) async -> Result<Answer, Failure> {
        guard (1...128).contains(transactionID.utf8.count), transactionID.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return .failure(Failure(kind: .invalidID, code: "invalid_transaction_id", message: "a transaction id is 1 to 128 digits"))
        }
        let lookup = AppByAppTransactionLookup(apps: clients.map {
            ($0.configuration.bundleID, ServerAPITransactionLookup(client: $0, signedData: signedData) as any TransactionLookup)
        })
        switch await lookup.lookUp(transactionID: transactionID, attempt: 0) {
        case .valid(let receipt):
            return await books(of: [receipt], orderID: nil)
        case .rejected(let reason, _) where reason == ReasonCode.transactionNotFound:
            return .failure(Failure(kind: .notFound, code: "transaction_not_found", message: "Apple knows no transaction \(transactionID)"))
        case .rejected(let reason, let detail):
            return .failure(Self.appleFailure(reason: reason, detail: detail ?? "", transient: false))
        case .misconfigured(let reason, let detail):
            return .failure(Self.appleFailure(reason: reason, detail: detail, transient: false))
        case .transient(let reason, let detail, _):
            return .failure(Self.appleFailure(reason: reason, detail: detail, transient: true))
        }
    }

    /// Grants a purchase Apple knows to `user` through the pipeline's own steps: a ticket whose
    /// evidence is the transaction id (looked up at Apple again by the verify stage, its unit
    /// claimed once by dedupe, granted with `source` `support`). The same user and transaction
    /// always give the same ticket; a unit claimed before ends `duplicate`, never granted twice.
    package func grant(transactionID: String, to user: String, ticketTTL: Duration) async throws -> (ticket: String, created: Bool) {
        var job = Job(
            ticket: TicketID.make(), userID: user, receiptData: nil, productID: nil, transactionID: transactionID,
            enqueuedAt: currentTimeMs())
        job.source = Self.grantSource
        var digest = SHA256()
        digest.update(data: Array(user.utf8) + [0] + Array("support".utf8) + [0] + Array(transactionID.utf8))
        return try await store.submit(job, receiptDigest: Hex.encode(digest.finalize()), ttl: ticketTTL)
    }

    /// The `source` of a grant the support desk made (on its grant record and fulfilment entry).
    package static let grantSource = "support"

    private func books(of receipts: [VerifiedReceipt], orderID: String?) async -> Result<Answer, Failure> {
        var purchases: [PurchaseBooks] = []
        do {
            for receipt in receipts {
                for transaction in receipt.transactions {
                    purchases.append(try await store.books(
                        of: transaction, environment: receipt.environment, unit: catalog?.grantUnit(for: transaction)))
                }
            }
        } catch {
            return .failure(Failure(kind: .redis, code: "redis_unavailable", message: "the books cannot be read right now; try again"))
        }
        return .success(Answer(orderID: orderID, purchases: purchases))
    }

    /// Apple's answer as a failure: `apple_unavailable` when later may do (the reason in the
    /// message), else Apple's reason itself (`apple_api_unauthorized`, `invalid_signature`, …).
    private static func appleFailure(reason: String, detail: String, transient: Bool) -> Failure {
        Failure(kind: .apple(transient: transient), code: transient ? "apple_unavailable" : reason,
            message: transient ? "\(reason): \(detail)" : detail)
    }
}

extension SupportLookup {
    /// From the pipeline's settings (every app's key); `nil` without Server API keys. Shut it down after use.
    package static func make(
        _ configuration: PipelineConfiguration, store: PipelineStore, logger: Logger
    ) throws(ConfigurationError) -> SupportLookup? {
        guard let tools = try ServerAPITools(configuration, store: store, logger: logger) else { return nil }
        return SupportLookup(store: store, catalog: tools.catalog, clients: tools.clients, signedData: tools.signedData)
    }
}
