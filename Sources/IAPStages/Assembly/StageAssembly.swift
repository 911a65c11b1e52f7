import AppleJWS
import AppleReceipt
import AppStoreServerAPI
import IAPSettings
import Logging
import PipelineCore

/// The one place the stages' handlers are built from the configuration. The stage executables
/// and the test harness both call it, so a test runs the handler production runs; what differs
/// is only what the caller hands in: Apple's clients (production's point at Apple, the harness's
/// at apple-sim), the catalog, the apps and the webhook's clients.
package struct StageAssembly: Sendable {
    package let configuration: PipelineConfiguration
    package let store: PipelineStore
    package let logger: Logger
    /// verifyReceipt's client (the verify stage's).
    package var apple: AppleVerifier?
    /// One App Store Server API client per app (its token's bid); none without keys.
    package var clients: [(bundleID: String, client: ServerAPIClient)]
    package var catalog: ProductCatalog?
    package var bundleIDs: Set<String>?
    /// The webhook stage's clients, by destination name (`WebhookClient.forEach`).
    package var webhooks: [String: any WebhookPosting]

    package init(
        configuration: PipelineConfiguration, store: PipelineStore, logger: Logger, apple: AppleVerifier? = nil,
        clients: [(bundleID: String, client: ServerAPIClient)] = [], catalog: ProductCatalog? = nil, bundleIDs: Set<String>? = nil,
        webhooks: [String: any WebhookPosting] = [:]
    ) {
        self.configuration = configuration
        self.store = store
        self.logger = logger
        self.apple = apple
        self.clients = clients
        self.catalog = catalog
        self.bundleIDs = bundleIDs
        self.webhooks = webhooks
    }

    /// `stage`'s handler; a setting it needs and lacks is a `ConfigurationError` naming it.
    package func handler(for stage: Stage) throws(ConfigurationError) -> any JobHandler {
        switch stage {
        case .verify: try verify()
        case .dedupe: try dedupe()
        case .grant: grant()
        case .notify: try notify()
        case .webhook: try webhookDelivery()
        }
    }

    private func requiredCatalog() throws(ConfigurationError) -> ProductCatalog {
        if let catalog { return catalog }
        return try configuration.requireCatalog()
    }

    private func verify() throws(ConfigurationError) -> VerifyHandler {
        let apple = self.apple ?? AppleVerifier(configuration: configuration.apple)
        let signedData = SignedDataVerifier(rootCertificates: try configuration.rootCertificates())
        let seams = configuration.appleSeams(apple: apple, clients: clients, signedData: signedData)
        let bundleIDs: Set<String>
        if let named = self.bundleIDs { bundleIDs = named } else { bundleIDs = try configuration.requireBundleIDs() }
        return VerifyHandler(
            apple: seams, signedData: signedData, bundleIDs: bundleIDs, retryPolicy: configuration.retryPolicy,
            rechecks: RecheckPromotion(schedule: configuration.recheck, ticketTTL: configuration.ticketTTL),
            receiptsByServerAPI: try configuration.receiptsByServerAPI() ? seams.readers.map(ReceiptByServerAPI.init) : nil,
            breaker: configuration.appleBreaker.map { AppleBreaker(store: store, settings: $0, logger: logger) })
    }

    private func dedupe() throws(ConfigurationError) -> DedupeHandler {
        DedupeHandler(
            catalog: try requiredCatalog(), policy: try configuration.purchasePolicy(), adoption: configuration.adoption,
            ticketTTL: configuration.ticketTTL)
    }

    private func grant() -> GrantHandler {
        GrantHandler(
            tokenTickets: configuration.appAccountTokenTickets, finishTickets: configuration.finishTransactionTickets,
            retention: RetentionSweep(settings: configuration.retention))
    }

    /// Consumption requests are answered when a refund preference is set (the catalog's rules
    /// first, if any: rules without the setting are refused), and app account tokens set and
    /// consumables finished at Apple, with the Server API keys.
    private func notify() throws(ConfigurationError) -> NotifyHandler {
        if configuration.errands.refundPreference != nil, clients.isEmpty {
            throw ConfigurationError(
                "IAP_REFUND_PREFERENCE", "answering consumption requests needs the App Store Server API key (IAP_APPLE_API_*)")
        }
        let catalog = try requiredCatalog()
        if configuration.errands.refundPreference == nil, let rule = catalog.refundRules.first {
            throw ConfigurationError(
                "IAP_REFUND_PREFERENCE",
                "the catalog's refund_preference rules (\(rule.name), …) answer consumption requests only when IAP_REFUND_PREFERENCE is set: set it (the rule of last resort), or take the rules out")
        }
        let apps = clients.isEmpty ? nil : EachApp(clients.map { ($0.bundleID, $0.client) })
        let answering = configuration.errands.refundPreference.flatMap { preference in
            apps.map { ConsumptionAnswering(apps: $0, preferences: preference, retryPolicy: configuration.retryPolicy) }
        }
        return NotifyHandler(
            catalog: catalog, consumption: answering,
            accountTokens: apps.map { AccountTokenErrands(apps: $0, retryPolicy: configuration.retryPolicy) })
    }

    /// One target per destination (`IAP_WEBHOOK_URL`'s `default`, `IAP_WEBHOOKS_FILE`'s), each
    /// with the client `webhooks` has for its name.
    private func webhookDelivery() throws(ConfigurationError) -> WebhookHandler {
        var targets: [WebhookHandler.Target] = []
        for destination in try configuration.webhook.required() {
            guard let poster = webhooks[destination.name] else {
                throw ConfigurationError("IAP_WEBHOOKS_FILE", "the webhook stage has no client for the destination \(destination.name)")
            }
            targets.append(WebhookHandler.Target(destination, poster: poster))
        }
        return WebhookHandler(
            targets: targets, slots: configuration.worker.concurrency, maxAge: configuration.webhook.maxAge,
            timeout: configuration.webhook.timeout, retryPolicy: configuration.retryPolicy)
    }
}
