import AppStoreServerAPI
import AppleJWS
import IAPSettings
import IAPStages
import Logging
import PipelineCore

/// What the operator's App Store Server API tools (the support lookup, the refund-history audit,
/// renewal extensions) are built on: every app's client, the catalog when there is one, and the
/// verifier of what Apple signs, all from the pipeline's settings.
package struct ServerAPITools: Sendable {
    package let clients: [ServerAPIClient]
    package let catalog: ProductCatalog?
    package let signedData: SignedDataVerifier

    /// `nil` without Server API keys. The caller shuts the clients down after use.
    package init?(_ configuration: PipelineConfiguration, store: PipelineStore, logger: Logger) throws(ConfigurationError) {
        let clients = try configuration.serverAPIClients(store: store, logger: logger).map(\.client)
        guard !clients.isEmpty else { return nil }
        self.clients = clients
        catalog = configuration.hasCatalog ? try configuration.requireCatalog() : nil
        signedData = SignedDataVerifier(rootCertificates: try configuration.rootCertificates())
    }
}
