import AppStoreServerAPI

/// The seam to Get Transaction History for a whole customer (a sync at login): every
/// transaction Apple has of the customer `id` names, verified, from `revision` on.
package protocol CustomerHistoryReading: Sendable {
    /// `bundleID`: the app whose key asks (`IAP_APPS_FILE`); one app's reader ignores it.
    func read(_ id: String, environment: String, from revision: String?, bundleID: String?) async -> ServerAPICustomerHistory.Read
}

extension ServerAPICustomerHistory: CustomerHistoryReading {
    package func read(_ id: String, environment: String, from revision: String?, bundleID: String?) async -> Read {
        await read(id, environment: environment, from: revision)
    }
}

/// Several apps' readers: each app's customers are read with that app's key.
package struct AppByAppCustomerHistory: CustomerHistoryReading {
    package let apps: [(bundleID: String, reader: ServerAPICustomerHistory)]

    package init(apps: [(bundleID: String, reader: ServerAPICustomerHistory)]) {
        precondition(!apps.isEmpty, "at least one app's reader")
        self.apps = apps
    }

    package func read(_ id: String, environment: String, from revision: String?, bundleID: String?) async -> ServerAPICustomerHistory.Read {
        let reader = apps.first { $0.bundleID == bundleID }?.reader ?? apps[0].reader
        return await reader.read(id, environment: environment, from: revision)
    }
}
