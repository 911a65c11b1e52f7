import Foundation
import PipelineCore
import Logging
import ServiceLifecycle

/// Says, every `every`, that this intake runs (`RedisKeys.intakes`: `<host>:<pid>` → now), and
/// withdraws when it stops, so that `iapctl migrate` does not move the ledger under a running
/// intake. One `ZADD` a round.
package struct IntakeAnnouncer: Service {
    let store: PipelineStore
    let every: Duration
    let logger: Logger
    let id = "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)"

    package init(store: PipelineStore, every: Duration = .seconds(5), logger: Logger) {
        self.store = store
        self.every = every
        self.logger = logger
    }

    package func run() async throws {
        let (store, id) = (store, id)
        await roundsUntilShutdown(every: every, logger: logger, failure: "intake announcement failed") { try await store.announceIntake(id) }
        try? await store.withdrawIntake(id)
    }
}
