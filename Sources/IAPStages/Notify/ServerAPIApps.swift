import AppStoreServerAPI
import PipelineCore

/// The App Store Server API clients of the configured apps (`IAP_APPS_FILE`: one each), from
/// which an errand takes its app's once: the app its purchase is of (its token's `bid`), the
/// first app's when it names none. The calls themselves name no app.
package struct ServerAPIApps: Sendable {
    package let clients: [(bundleID: String, client: ServerAPIClient)]

    package init(clients: [(bundleID: String, client: ServerAPIClient)]) {
        precondition(!clients.isEmpty, "at least one app's client")
        self.clients = clients
    }

    package func client(for bundleID: String?) -> ServerAPIClient {
        clients.first { $0.bundleID == bundleID }?.client ?? clients[0].client
    }
}
