import ArgumentParser
import Foundation
import IAPCLI
import IAPSettings
import IAPStages
import IAPOperations
import Logging
import PlainJSON

/// `iapctl lookup order|transaction ID`: a purchase the player names, found at Apple and read in
/// the books; `--grant-to USER` grants what nobody was granted, through the pipeline's own steps.
struct LookupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup",
        abstract: "Find a player's purchases by the order id on Apple's email receipt (or a transaction id) and where each stands.")

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case order, transaction
    }

    @OptionGroup var redis: RedisOptions
    @OptionGroup var appsFile: AppsFileOptions
    @OptionGroup var app: AppOptions
    @OptionGroup var key: ServerAPIKeyOptions
    @OptionGroup var client: ServerAPIClientOptions
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var tickets: TicketOptions
    @Argument(help: "order (the id on the customer's email receipt from Apple) or transaction.") var kind: Kind
    @Argument(help: "The order id or transaction id.") var id: String
    @Option(
        name: .customLong("grant-to"),
        help: "Grant each purchase found that nobody was granted (state unknown or unclaimed, not refunded) to this user, once (source=support).")
    var grantTo: String?
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        if let grantTo, !(1...128).contains(grantTo.utf8.count) || !grantTo.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) {
            throw ValidationError("--grant-to: a user id is 1 to 128 printable ASCII characters")
        }
    }

    func run() async throws {
        let configuration = loadConfiguration(of: self)
        guard configuration.isServerAPIConfigured else {
            throw ValidationError("needs IAP_APPLE_API_KEY_ID, IAP_APPLE_API_ISSUER_ID and IAP_APPLE_API_PRIVATE_KEY_FILE")
        }
        let (kind, id, grantTo) = (kind, id, grantTo)
        let (result, grants) = try await withStore(configuration) { store in
            let lookup: SupportLookup?
            do { lookup = try SupportLookup.make(configuration, store: store, logger: Logger(label: "iapctl")) } catch let error as ConfigurationError {
                failConfiguration(error)
            }
            guard let lookup else { throw ExitCode(1) }
            let result = kind == .order ? await lookup.order(id) : await lookup.transaction(id)
            var grants: [Grant] = []
            if let grantTo, case .success(let answer) = result {
                for purchase in answer.purchases where purchase.isGrantable {
                    let made = try await lookup.grant(transactionID: purchase.transaction.transactionID, to: grantTo, ticketTTL: configuration.ticketTTL)
                    grants.append(Grant(transactionID: purchase.transaction.transactionID, ticket: made.ticket, created: made.created))
                }
            }
            await lookup.shutdown()
            return (result, grants)
        }
        switch result {
        case .failure(let failure):
            if json {
                print(JSONValue.members(["error": .members(["code": .string(failure.code), "message": .string(failure.message)])]).canonicalText)
            } else {
                print("\(failure.code): \(failure.message)")
            }
            throw ExitCode(failure.kind == .notFound ? 1 : 2)
        case .success(let answer):
            if json {
                var body = answer.json
                if grantTo != nil, case .object(var members) = body {
                    members["grants"] = .array(grants.map { .members(["transaction_id": .string($0.transactionID), "ticket": .string($0.ticket), "new": .bool($0.created)]) })
                    body = .object(members)
                }
                print(body.canonicalText)
            } else {
                print(Self.describe(answer))
                for grant in grants {
                    print("granted to \(grantTo ?? ""): \(grant.transactionID) → ticket \(grant.ticket)\(grant.created ? "" : " (asked before: the same ticket)")  (iapctl ticket \(grant.ticket))")
                }
            }
            if grantTo != nil && grants.isEmpty {
                if !json { print("nothing to grant: every purchase found is in the books already (or refunded)") }
                throw ExitCode(1)
            }
        }
    }

    struct Grant {
        var transactionID: String
        var ticket: String
        var created: Bool
    }


    static func describe(_ answer: SupportLookup.Answer) -> String {
        var lines = [answer.orderID.map { "order \($0): \(answer.purchases.count) purchase(s)" } ?? "transaction:"]
        for purchase in answer.purchases {
            let t = purchase.transaction
            var line = "  \(t.transactionID)  \(t.productID) ×\(t.quantity)  \(purchase.environment)  \(purchase.state)"
            if let user = purchase.grant["user_id"] {
                line += "  to \(user) at \(purchase.grant["granted_at"] ?? "?") (source \(purchase.grant["source"] ?? "?"))"
            }
            if let revoked = purchase.grant["revoked_at"], !revoked.isEmpty {
                line += ", revoked at \(revoked) (\(purchase.grant["revocation_reason"] ?? "?"))"
            } else if let taken = purchase.grant["revoked_quantity"] {
                line += ", \(taken) of \(purchase.grant["quantity"] ?? "?") refunded at \(purchase.grant["partially_revoked_at"] ?? "?")"
            }
            if let reason = purchase.hold["reason"] { line += "  hold: \(purchase.hold["status"] ?? "?") (\(reason))" }
            if let ticket = purchase.claimTicket { line += "  ticket \(ticket) (\(purchase.claimStatus ?? "?"))" }
            if let owner = purchase.owner, owner != purchase.grant["user_id"] { line += "  owner \(owner)" }
            if purchase.transaction.isRefunded { line += "  refunded by Apple" }
            if let status = purchase.subscription["status"] { line += "  subscription \(status) until \(purchase.subscription["expires_at"] ?? "?")" }
            if purchase.unit == nil { line += "  (product not in the catalog)" }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
