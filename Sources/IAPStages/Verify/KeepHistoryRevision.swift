import PipelineCore
import PlainJSON
import RedisClient

/// `keep_history_revision`: where a sync read an Apple Account's history to, for the next sync.
package struct KeepHistoryRevision: PipelineScript {
    package static let script = LuaSource.script("keep_history_revision")
    package let keys: [String]
    package let arguments: [String]

    package init(_ keys: RedisKeys, appTransactionID: String, environment: String, revision: String) {
        self.keys = [keys.appleAccount(appTransactionID)]
        arguments = [JSONValue.object(["environment": .string(environment), "revision": .string(revision)]).canonicalText]
    }

    package static func decode(_ reply: RedisReply) throws -> Bool { try reply.flag(script: name) }
}

extension PipelineStore {
    /// Where the last sync read the Apple Account's history to, in this environment (`nil`: from the start).
    package func historyRevision(ofAppleAccount appTransactionID: String, environment: String) async throws -> String? {
        let reply = try await redis.send("HGET", keys.appleAccount(appTransactionID), "revision:\(environment)")
        if case .error(let message) = reply { throw RedisError.server(message) }
        return reply.string
    }

    /// Keeps where a sync read the Apple Account's history to (`keep_history_revision`).
    package func keepHistoryRevision(_ revision: String, ofAppleAccount appTransactionID: String, environment: String) async throws {
        _ = try await run(KeepHistoryRevision(keys, appTransactionID: appTransactionID, environment: environment, revision: revision))
    }
}

extension WorkerContext {
    /// Keeps where a sync read the Apple Account's history to; a failure only costs the next sync
    /// a longer read (logged, never the job's end).
    func keepHistoryRevision(_ revision: String, of account: String, environment: String) async {
        do {
            try await store.keepHistoryRevision(revision, ofAppleAccount: account, environment: environment)
        } catch {
            logger.warning("the history revision was not kept: the next sync reads from the last one kept", metadata: [
                "error": "\(error)",
            ])
        }
    }
}
