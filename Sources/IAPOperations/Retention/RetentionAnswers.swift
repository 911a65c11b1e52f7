import AppStoreServerAPI
import AppleJWS
import Foundation
import IAPSettings
import IAPStages
import Logging
import PipelineCore
import PlainJSON

/// Answers Apple's real-time retention requests (`POST /v1/apple/retention`, Apple's Get Retention
/// Message endpoint) by the catalog's `retention` rules, from the books alone: no call to Apple
/// on the path. A request is trusted only by Apple's signature (chained to our roots, as a
/// notification is), taken only while fresh, and answered once (its `requestIdentifier`).
package struct RetentionAnswers: Sendable {
    package let store: PipelineStore
    package let rules: [RetentionRule]
    package let catalog: ProductCatalog
    package let verifier: SignedDataVerifier
    /// By bundle id (`PipelineConfiguration.offerSigners()`): what signs a promotional offer.
    package let signers: [String: OfferSigner]
    package let bundleIDs: Set<String>
    /// `IAP_APPLE_APP_ID`, and per app `app_apple_id` (`IAP_APPS_FILE`): a production request must name one.
    package let appAppleID: Int64?
    package let appAppleIDs: [String: Int64]
    /// How old a request may be (its `signedDate`) and still be answered.
    package let maxAge: Duration

    package init(
        store: PipelineStore, catalog: ProductCatalog, verifier: SignedDataVerifier, signers: [String: OfferSigner],
        bundleIDs: Set<String>, appAppleID: Int64?, appAppleIDs: [String: Int64] = [:], maxAge: Duration = .seconds(300)
    ) {
        self.store = store
        self.rules = catalog.retentionRules
        self.catalog = catalog
        self.verifier = verifier
        self.signers = signers
        self.bundleIDs = bundleIDs
        self.appAppleID = appAppleID
        self.appAppleIDs = appAppleIDs
        self.maxAge = maxAge
    }

    /// From the intake's settings (the notifications' verifier: the same roots and online checks).
    /// Rules that answer a promotional offer need a key that signs V2 offers (with the team's
    /// issuer id): without one the intake does not start.
    package static func make(
        _ configuration: PipelineConfiguration, catalog: ProductCatalog, verifier: SignedDataVerifier, signers: [String: OfferSigner],
        store: PipelineStore
    ) throws(ConfigurationError) -> RetentionAnswers {
        let offering = catalog.retentionRules.filter { if case .promotionalOffer = $0.offer { true } else { false } }
        if let rule = offering.first, !signers.values.contains(where: { $0.issuerID?.isEmpty == false }) {
            throw ConfigurationError(
                "IAP_PRODUCTS_FILE",
                "retention rule \(rule.name) answers a promotional offer, which needs an In-App Purchase key and the team's issuer id "
                    + "(IAP_OFFER_KEY_ID, IAP_OFFER_PRIVATE_KEY_FILE and IAP_APPLE_API_ISSUER_ID, or an app's offer_key and issuer_id)")
        }
        return RetentionAnswers(
            store: store, catalog: catalog, verifier: verifier, signers: signers, bundleIDs: configuration.bundleIDs,
            appAppleID: configuration.appleAppID, appAppleIDs: configuration.appAppleIDs)
    }

    /// What a request is answered with: Apple's `RealtimeResponseBody` (empty: show the default
    /// message) and the rule that chose it (`none`).
    package struct Answer: Sendable {
        package var body: JSONValue
        package var rule: String
        package var request: RealtimeRequest
        package var user: String
    }

    /// Why a request is refused and nothing recorded: a machine-readable code and its HTTP status.
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        package var status: Int
        package var code: String
        package var message: String
        package var description: String { "\(code): \(message)" }

        static func bad(_ code: String, _ message: String) -> Refusal { Refusal(status: 400, code: code, message: message) }
    }

    /// Verifies `signedPayload`, decides and records the answer. Throws `Refusal` for a request
    /// that must not be answered, and the store's error when Redis cannot be read or written.
    package func answer(_ signedPayload: String, now: Int64 = currentTimeMs(), logger: Logger) async throws -> Answer {
        let request: RealtimeRequest
        do {
            request = try await verifier.verify(signedPayload, as: RealtimeRequest.self)
        } catch {
            logger.warning("retention request refused: it does not verify", metadata: ["cause": "\(error)"])
            throw Refusal(status: 401, code: "invalid_signature", message: "the request does not verify: \(error)")
        }
        try checkFresh(request, now: now)
        let record = try await store.subscriptionRecord(originalTransactionID: request.originalTransactionID)
        let bundle = try app(of: request, record: record)
        let user = record["user_id"] ?? ""
        var chosen: (rule: RetentionRule, body: JSONObject)?
        var facts: RetentionFacts?
        if !user.isEmpty, !rules.isEmpty {
            let known = try await store.retentionFacts(
                owner: user, originalTransactionID: request.originalTransactionID, productID: request.productID,
                sandbox: request.environment != "Production", now: now)
            chosen = try decide(request, facts: known, bundle: bundle, now: now)
            facts = known
        }
        let rule = chosen?.rule
        var event: JSONObject = [
            "event": .string("retention_offered"), "retention_rule": .string(rule?.name ?? "none"),
            "original_transaction_id": .string(request.originalTransactionID), "product_id": .string(request.productID),
            "environment": .string(request.environment), "request_id": .string(request.requestIdentifier),
            "user_locale": .string(request.userLocale), "retention_kind": .string(rule.map { Self.kind($0.offer) } ?? "default"),
        ]
        if let rule { event["retention_message"] = .string(rule.message) }
        if let bundle { event["bundle_id"] = .string(bundle) }
        if let storefront = facts?.storefront { event["storefront"] = .string(storefront) }
        var offer = ""
        switch rule?.offer {
        case .alternateProduct(let product, let plan):
            (event["alternate_product"], offer) = (.string(product), product)
            if let plan { event["billing_plan_type"] = .string(plan) }
        case .promotionalOffer(let id):
            (event["offer_identifier"], offer) = (.string(id), id)
        case .none?, nil: break
        }
        let recorded = try await store.run(
            RecordRetentionAnswer(
                store.keys, originalTransactionID: request.originalTransactionID, requestID: request.requestIdentifier, user: user,
                event: event, offer: offer, now: now),
            replicated: true)
        guard recorded else {
            logger.warning("retention request refused: answered before", metadata: ["request": "\(request.requestIdentifier)"])
            throw Refusal(status: 409, code: "replayed_request", message: "this requestIdentifier was answered before")
        }
        return Answer(body: .object(chosen?.body ?? [:]), rule: rule?.name ?? "none", request: request, user: user)
    }

    /// A request signed more than `maxAge` ago, or over a minute ahead of our clock, is refused:
    /// with the `requestIdentifier` kept an hour, an old request cannot be played again later.
    func checkFresh(_ request: RealtimeRequest, now: Int64) throws(Refusal) {
        guard UUID(uuidString: request.requestIdentifier) != nil else {
            throw .bad("invalid_request", "requestIdentifier is not a UUID")
        }
        let signed = request.signedDate ?? 0
        let age = Double(now - signed) / 1000
        guard age <= Double(maxAge.components.seconds), age >= -60 else {
            throw .bad("stale_request", "the request was signed \(Int(age)) s ago; at most \(maxAge.components.seconds) s is taken")
        }
    }

    /// The app the request is for, checked: a production request names one of our App Apple IDs
    /// (when any is set), its subscription's record (when kept) is of the request's environment and
    /// of an app this deployment serves. The bundle id: the record's, else the one app with the
    /// request's App Apple ID, else the only bundle.
    func app(of request: RealtimeRequest, record: [String: String]) throws(Refusal) -> String? {
        let byID = appAppleIDs.filter { $0.value == request.appAppleID }.map(\.key).sorted()
        if request.environment == "Production", appAppleID != nil || !appAppleIDs.isEmpty,
            byID.isEmpty && appAppleID != request.appAppleID
        {
            throw .bad("app_apple_id_mismatch", "the request's appAppleId is not this app's (IAP_APPLE_APP_ID, or app_apple_id in IAP_APPS_FILE)")
        }
        if let environment = record["environment"], environment != request.environment {
            throw .bad(
                "environment_mismatch",
                "the request is for \(request.environment.prefix(32)) but the subscription was bought in \(environment.prefix(32))")
        }
        let bundle = record["bundle_id"] ?? (byID.count == 1 ? byID[0] : nil) ?? (bundleIDs.count == 1 ? bundleIDs.first : nil)
        if let bundle, !bundleIDs.contains(bundle) {
            throw .bad("bundle_mismatch", "the subscription is of a bundle id not in IAP_BUNDLE_IDS (\(bundle.prefix(128)))")
        }
        if let bundle, request.environment == "Production", let expected = appAppleIDs[bundle], expected != request.appAppleID {
            throw .bad("app_apple_id_mismatch", "the request's appAppleId is not that of the subscription's app \(bundle.prefix(128))")
        }
        return bundle
    }

    /// The first rule that matches and can be answered for this request: a switch plan to another
    /// product of the request's subscription group (or to its own product on another billing
    /// plan), a promotional offer of the request's product.
    func decide(
        _ request: RealtimeRequest, facts: RetentionFacts, bundle: String?, now: Int64
    ) throws -> (rule: RetentionRule, body: JSONObject)? {
        let group = Set(catalog.groupProducts(of: request.productID))
        for rule in rules where rule.matches(facts) {
            let message = JSONValue.string(rule.message)
            switch rule.offer {
            case .none:
                return (rule, ["message": .object(["messageIdentifier": message])])
            case .alternateProduct(let product, let plan):
                guard group.contains(product), product != request.productID || plan != nil else { continue }
                var alternate: JSONObject = ["messageIdentifier": message, "productId": .string(product)]
                if let plan { alternate["billingPlanType"] = .string(plan) }
                return (rule, ["alternateProduct": .object(alternate)])
            case .promotionalOffer(let offer):
                guard catalog.offers[request.productID]?[offer] != nil else { continue }
                guard let signer = bundle.flatMap({ signers[$0] }) ?? (signers.count == 1 ? signers.values.first : nil) else {
                    throw Refusal(status: 503, code: "offers_not_configured", message: "no In-App Purchase key signs offers for this app")
                }
                let jws = try signer.promotionalV2(
                    productID: request.productID, offerID: offer, transactionID: request.originalTransactionID,
                    issuedAt: now / 1000)
                return (rule, ["promotionalOffer": .object(["messageIdentifier": message, "promotionalOfferSignatureV2": .string(jws)])])
            }
        }
        return nil
    }

    static func kind(_ offer: RetentionRule.Offer) -> String {
        switch offer {
        case .none: "message"
        case .alternateProduct: "alternate_product"
        case .promotionalOffer: "promotional_offer"
        }
    }
}
