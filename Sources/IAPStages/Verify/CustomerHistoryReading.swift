import AppStoreServerAPI

/// The seam to Get Transaction History for a whole customer (a sync at login): every
/// transaction Apple has of the customer `id` names, verified, from `revision` on. One app's
/// reader: several apps' are resolved for a job's app (`EachApp.of(_:)`).
package protocol CustomerHistoryReading: Sendable {
    func read(_ id: String, environment: String, from revision: String?) async -> ServerAPICustomerHistory.Read
}

extension ServerAPICustomerHistory: CustomerHistoryReading {
    package func read(_ id: String, environment: String, from revision: String?) async -> Read {
        await read(id, environment: environment, from: revision, maxPages: Self.maxPages)
    }
}
