import AppStoreServerAPI
import Foundation
import IAPStages
import PipelineCore
import PlainJSON

/// Signs offers for StoreKit (`POST /v1/offers/signatures`) for those the catalog says may have
/// them: a promotional offer (`offers` on the product: `any`, `lapsed`, `new`) and a
/// product's introductory offer (allowed to a user who never had the product's subscription
/// group). What a user had is read from the books: their subscription records and, with an
/// `appTransactionId`, those of every user seated on that Apple Account.
package struct OfferSignatures: Sendable {
    package let store: PipelineStore
    package let catalog: ProductCatalog
    /// By bundle id (`PipelineConfiguration.offerSigners()`); empty: nothing is signed.
    package let signers: [String: OfferSigner]
    /// The apps this deployment serves: what `bundle_id` may name.
    package let bundleIDs: Set<String>

    package init(store: PipelineStore, catalog: ProductCatalog, signers: [String: OfferSigner], bundleIDs: Set<String>) {
        self.store = store
        self.catalog = catalog
        self.signers = signers
        self.bundleIDs = bundleIDs
    }

    package enum Kind: String, Sendable, CaseIterable {
        /// Apple's v1 promotional offer signature (`{key_id, nonce, timestamp, signature}`).
        case promotional
        /// A promotional offer's V2 compact JWS.
        case promotionalV2 = "promotional_v2"
        /// An introductory offer's eligibility, a compact JWS.
        case introductoryEligibility = "introductory_eligibility"
    }

    package struct Request: Sendable, Equatable {
        package var userID: String
        package var productID: String
        package var kind: Kind
        /// Required for the promotional kinds.
        package var offerID: String?
        /// Required when several apps are signed for.
        package var bundleID: String?
        /// Any transaction of the customer: the V2 signature's optional `transactionId`, and the
        /// eligibility's (else `appTransactionID`).
        package var transactionID: String?
        /// The customer's Apple Account (`AppTransaction.appTransactionID`): `new` and the
        /// introductory offer then also look at every user seated on it.
        package var appTransactionID: String?

        package init(
            userID: String, productID: String, kind: Kind, offerID: String? = nil, bundleID: String? = nil, transactionID: String? = nil,
            appTransactionID: String? = nil
        ) {
            self.userID = userID
            self.productID = productID
            self.kind = kind
            self.offerID = offerID
            self.bundleID = bundleID
            self.transactionID = transactionID
            self.appTransactionID = appTransactionID
        }
    }

    /// Why nothing was signed: a machine-readable code, the HTTP status it means, and a message.
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        package enum Kind: Sendable, Equatable {
            /// The request names what cannot be signed (400).
            case badRequest
            /// The user may not have the offer (403).
            case notEligible
            /// No key to sign with, or the books could not be read (503).
            case unavailable
        }

        package var kind: Kind
        package var code: String
        package var message: String
        package var description: String { "\(code): \(message)" }

        init(_ kind: Kind, _ code: String, _ message: String) {
            self.kind = kind
            self.code = code
            self.message = message
        }
    }

    /// What was signed, as the intake answers it.
    package struct Answer: Sendable {
        package var json: JSONValue
    }

    package func sign(_ request: Request, now: Date = Date()) async -> Result<Answer, Refusal> {
        do {
            return .success(try await answer(request, now: now))
        } catch let refusal as Refusal {
            return .failure(refusal)
        } catch {
            return .failure(Refusal(.unavailable, "redis_unavailable", "the user's subscriptions cannot be read right now; try again"))
        }
    }

    private func answer(_ request: Request, now: Date) async throws -> Answer {
        let signer = try signer(request.bundleID)
        // Each signature's own nonce: in what StoreKit gets, and in the user's log of signatures.
        let nonce = UUID()
        if let named = request.appTransactionID, try await !store.isSeated(request.userID, onAppleAccount: named) {
            throw Refusal(
                .badRequest, "app_transaction_id_not_seated",
                "app_transaction_id names an Apple Account this user is not seated on (submit the user's signed_app_transaction first)")
        }
        guard catalog.products[request.productID] == .autoRenewable else {
            throw Refusal(.badRequest, "offer_not_found", "\(request.productID) is not an auto-renewable subscription of the catalog")
        }
        let group = catalog.groupProducts(of: request.productID)
        let groupName = catalog.subscriptionGroups[request.productID] ?? request.productID
        var json: JSONObject = [
            "kind": .string(request.kind.rawValue), "bundle_id": .string(signer.bundleID), "product_id": .string(request.productID),
        ]
        switch request.kind {
        case .promotional, .promotionalV2:
            guard let offerID = request.offerID else {
                throw Refusal(.badRequest, "missing_field", "offer_id is required for \(request.kind.rawValue)")
            }
            guard let eligibility = catalog.offers[request.productID]?[offerID] else {
                throw Refusal(.badRequest, "offer_not_found", "the catalog lists no offer \(offerID) on \(request.productID)")
            }
            try await requireEligible(request, for: offerID, eligibility, group: group, groupName: groupName)
            json["offer_id"] = .string(offerID)
            if request.kind == .promotional {
                let token = try await store.accountToken(ofUser: request.userID) ?? ""
                let signature = try signer.promotional(
                    productID: request.productID, offerID: offerID, applicationUsername: token, nonce: nonce,
                    timestamp: Int64((now.timeIntervalSince1970 * 1000).rounded(.down)))
                json["key_id"] = .string(signature.keyID)
                json["nonce"] = .string(signature.nonce)
                json["timestamp"] = .int(signature.timestamp)
                json["signature"] = .string(signature.signature)
                json["app_account_token"] = .string(token.lowercased())
            } else {
                json["jws"] = .string(try jws {
                    try signer.promotionalV2(
                        productID: request.productID, offerID: offerID, transactionID: request.transactionID, nonce: nonce,
                        issuedAt: Int64(now.timeIntervalSince1970))
                })
            }
        case .introductoryEligibility:
            // Named, else the Apple Account the user is seated on (the first, when several).
            let seated = try await store.appleAccounts(ofUser: request.userID)
            guard let transactionID = request.transactionID ?? request.appTransactionID ?? seated.first else {
                throw Refusal(
                    .badRequest, "missing_field",
                    "introductory_eligibility needs transaction_id or app_transaction_id (any transaction of the customer); "
                        + "this user is seated on no Apple Account to use instead")
            }
            let allow = try await history(request, group: group, seated: seated) == .never
            json["allow_introductory_offer"] = .bool(allow)
            json["jws"] = .string(try jws {
                try signer.introductoryEligibility(
                    productID: request.productID, allow: allow, transactionID: transactionID, nonce: nonce,
                    issuedAt: Int64(now.timeIntervalSince1970))
            })
        }
        try await store.recordOfferSignature(user: request.userID, fields: [
            ("kind", request.kind.rawValue), ("product_id", request.productID), ("offer_id", request.offerID ?? ""),
            ("nonce", nonce.uuidString.lowercased()), ("bundle_id", signer.bundleID),
        ])
        return Answer(json: .object(json))
    }

    /// Refuses (`not_eligible`) a user whose history in the subscription group the offer's
    /// eligibility excludes: lapsed subscribers only, or those who never had it.
    private func requireEligible(
        _ request: Request, for offerID: String, _ eligibility: ProductCatalog.OfferEligibility, group: [String], groupName: String
    ) async throws {
        guard eligibility != .any else { return }
        let history = try await history(request, group: group)
        let allowed = eligibility == .lapsed ? history == .lapsed : history == .never
        guard !allowed else { return }
        let had = switch history {
        case .never: "never had it"
        case .lapsed: "had it before"
        case .active: "has it now"
        }
        throw Refusal(
            .notEligible, "not_eligible",
            "offer \(offerID) is for \(eligibility == .lapsed ? "lapsed subscribers of" : "those who never had") "
                + "subscription group \(groupName); this user \(had)")
    }

    /// The app's signer: the one named, else the only one.
    private func signer(_ bundleID: String?) throws(Refusal) -> OfferSigner {
        if let bundleID {
            guard bundleIDs.contains(bundleID) else {
                throw Refusal(.badRequest, "unknown_bundle_id", "this deployment does not serve \(bundleID)")
            }
            guard let signer = signers[bundleID] else {
                throw Refusal(.unavailable, "offers_not_configured", "no In-App Purchase key signs offers for \(bundleID)")
            }
            return signer
        }
        guard !signers.isEmpty else {
            throw Refusal(
                .unavailable, "offers_not_configured",
                "this intake has no In-App Purchase key (IAP_OFFER_KEY_ID, IAP_OFFER_PRIVATE_KEY_FILE, or an app's offer_key)")
        }
        guard signers.count == 1, let only = signers.values.first else {
            throw Refusal(.badRequest, "missing_field", "bundle_id is required: this intake signs offers for several apps")
        }
        return only
    }

    /// The request's user, and every user seated on an Apple Account the user is seated on
    /// (named in the request or not): a fresh game account on an Apple Account that had the
    /// subscription is not "new".
    /// `seated`: the user's Apple Accounts when the caller read them already.
    private func history(_ request: Request, group: [String], seated: [String]? = nil) async throws -> PipelineStore.GroupHistory {
        var users = [request.userID]
        var accounts = Set(seated ?? [])
        if seated == nil { accounts = Set(try await store.appleAccounts(ofUser: request.userID)) }
        if let named = request.appTransactionID { accounts.insert(named) }
        for account in accounts.sorted() {
            users += try await store.appleAccountUsers(account)
        }
        return try await store.groupHistory(users: users, products: Set(group))
    }

    private func jws(_ make: () throws -> String) throws -> String {
        do {
            return try make()
        } catch OfferSigner.SigningError.noIssuerID {
            throw Refusal(
                .unavailable, "offers_not_configured",
                "the JWS offer signatures need the team's issuer id (IAP_APPLE_API_ISSUER_ID, or the app's server_api issuer_id)")
        }
    }
}
