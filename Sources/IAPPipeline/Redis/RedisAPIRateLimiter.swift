import AppStoreServerAPI
import Foundation
import RedisClient

/// The App Store Server API budget shared by every verifier through Redis: `take_api_permit`
/// and `hold_api_endpoint`. Production gets `maxPerSecond`, sandbox a tenth (Apple's limits).
public struct RedisAPIRateLimiter: ServerAPIRateLimiting {
    public let store: PipelineStore
    public let maxPerSecond: Int
    /// Slightly longer than a second, so that network jitter between the permit and Apple's
    /// arrival cannot squeeze `limit + 1` calls into one of Apple's seconds.
    public static let window: Duration = .milliseconds(1100)

    public init(store: PipelineStore, maxPerSecond: Int) {
        self.store = store
        self.maxPerSecond = maxPerSecond
    }

    public func limit(_ environment: ServerAPIEnvironment) -> Int {
        environment == .production ? maxPerSecond : max(maxPerSecond / 10, 1)
    }

    public func permit(endpoint: ServerAPIEndpoint, environment: ServerAPIEnvironment) async throws -> Duration? {
        let waitMs = try await store.takeAPIPermit(
            environment: environment.rawValue.lowercased(), endpoint: endpoint.rawValue, limit: limit(environment),
            window: Self.window)
        return waitMs > 0 ? .milliseconds(waitMs) : nil
    }

    public func hold(endpoint: ServerAPIEndpoint, environment: ServerAPIEnvironment, untilMs: Int64) async throws {
        try await store.holdAPIEndpoint(environment: environment.rawValue.lowercased(), endpoint: endpoint.rawValue, untilMs: untilMs)
    }
}

extension PipelineStore {
    /// Takes one call from the fleet's budget; returns 0 when granted, else the ms to wait.
    public func takeAPIPermit(environment: String, endpoint: String, limit: Int, window: Duration) async throws -> Int64 {
        let arguments = TakeAPIPermitArguments(limit: limit, windowMs: Int(window / .milliseconds(1)), call: UUID().uuidString)
        let reply = try await redis.run(
            PipelineScripts.takeAPIPermit,
            keys: [keys.apiPermits(environment: environment, endpoint: endpoint), keys.apiHold(environment: environment, endpoint: endpoint)],
            arguments: [String(decoding: canonicalJSON(arguments), as: UTF8.self)])
        guard let wait = reply.int else { throw RedisError.unexpectedReply("take_api_permit: \(reply)") }
        return wait
    }

    /// Holds an endpoint fleet-wide until `untilMs` (UNIX ms); returns the hold in force.
    @discardableResult
    public func holdAPIEndpoint(environment: String, endpoint: String, untilMs: Int64) async throws -> Int64 {
        let reply = try await redis.run(
            PipelineScripts.holdAPIEndpoint, keys: [keys.apiHold(environment: environment, endpoint: endpoint)],
            arguments: [["until_ms": String(untilMs)].argument])
        return reply.int ?? 0
    }
}

/// The named arguments of `take_api_permit`.
struct TakeAPIPermitArguments: Encodable {
    var limit: Int
    var windowMs: Int
    var call: String

    enum CodingKeys: String, CodingKey {
        case limit
        case windowMs = "window_ms"
        case call
    }
}

extension ServerAPITransactionLookup: TransactionLookup {}
extension ServerAPISubscriptionCheck: SubscriptionChecking {}
