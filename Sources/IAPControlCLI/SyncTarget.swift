import ArgumentParser
import IAPStages
import PipelineCore

/// Whose Apple Account history a command reads, as a sync at login does: `iapctl user sync` and
/// `iapctl adopt report`.
struct SyncTarget: ParsableArguments {
    @Argument(help: "The user id.") var user: String
    @Option(help: "The Apple Account (appTransactionId); default: every one the user is seated on.") var appTransactionId: String?
    @Option(help: "The app whose Server API key asks (with IAP_APPS_FILE).") var bundleId: String?
    @Flag(help: "Read the sandbox's history, not production's.") var sandboxHistory = false

    var environment: String { sandboxHistory ? "Sandbox" : "Production" }

    /// The Apple Account named, or every one the user is seated on.
    func accounts(in store: PipelineStore) async throws -> [String] {
        if let appTransactionId { return [appTransactionId] }
        return try await store.appleAccounts(ofUser: user)
    }
}
