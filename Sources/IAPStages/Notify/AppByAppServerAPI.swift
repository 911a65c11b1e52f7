import AppStoreServerAPI
import PipelineCore

/// The notify stage's Server API calls for several apps (`IAP_APPS_FILE`): each goes out with the
/// key of the app the purchase is of (its token's `bid`), the first app's when it names none.
package struct AppByAppServerAPI: ConsumptionReporting, AppAccountTokenSetting, TransactionFinishing {
    package let clients: [(bundleID: String, client: ServerAPIClient)]

    package init(clients: [(bundleID: String, client: ServerAPIClient)]) {
        precondition(!clients.isEmpty, "at least one app's client")
        self.clients = clients
    }

    func client(_ bundleID: String?) -> ServerAPIClient {
        clients.first { $0.bundleID == bundleID }?.client ?? clients[0].client
    }

    package func sendConsumptionInformation(
        _ information: ConsumptionInformation, transactionID: String, environment: ServerAPIEnvironment, bundleID: String?
    ) async -> ServerAPIAnswer {
        await client(bundleID).sendConsumptionInformation(information, transactionID: transactionID, environment: environment)
    }

    package func setAppAccountToken(
        _ token: String, originalTransactionID: String, environment: ServerAPIEnvironment, bundleID: String?
    ) async -> ServerAPIAnswer {
        await client(bundleID).setAppAccountToken(token, originalTransactionID: originalTransactionID, environment: environment)
    }

    package func finishTransaction(_ transactionID: String, environment: ServerAPIEnvironment, bundleID: String?) async -> ServerAPIAnswer {
        await client(bundleID).finishTransaction(transactionID, environment: environment)
    }
}
