import Foundation
import NIOHTTP1

/// The Retention Messaging API's setup calls (`/inApps/v1/messaging/…`, Apple's
/// `AppStoreServerAPIClient` names in brackets): what `iapctl apple retention` makes. Each answers
/// Apple's body (`.ok`, empty for the writes) or why not.
extension ServerAPIClient {
    static let messaging = "/inApps/v1/messaging"

    private func messagingCall(
        method: HTTPMethod = .GET, _ path: String, json: [String: Any]? = nil, environment: ServerAPIEnvironment
    ) async -> ServerAPIAnswer {
        var body: [UInt8]?
        if let json {
            guard let data = try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]) else {
                return .misconfigured(detail: "cannot encode the request")
            }
            body = Array(data)
        }
        return await call(.retentionMessaging, method: method, path: Self.messaging + path, body: body, environment: environment)
    }

    /// `PUT …/realtime/url` `{realtimeURL}` (`configureRealtimeURL`): where Apple sends real-time
    /// requests. Production takes one only after a passing sandbox performance test.
    public func setRealtimeURL(_ url: String, environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await messagingCall(method: .PUT, "/realtime/url", json: ["realtimeURL": url], environment: environment)
    }

    /// `GET …/realtime/url` (`getRealtimeURL`): `{realtimeURL}`.
    public func realtimeURL(environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await messagingCall("/realtime/url", environment: environment)
    }

    /// `DELETE …/realtime/url` (`deleteRealtimeURL`).
    public func deleteRealtimeURL(environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await messagingCall(method: .DELETE, "/realtime/url", environment: environment)
    }

    /// `PUT …/message/{id}` `{header, body, image?: {imageIdentifier, altText}}` (`uploadMessage`).
    public func uploadMessage(
        _ id: String, header: String, body: String, image: (id: String, altText: String)?, environment: ServerAPIEnvironment
    ) async -> ServerAPIAnswer {
        var json: [String: Any] = ["header": header, "body": body]
        if let image { json["image"] = ["imageIdentifier": image.id, "altText": image.altText] }
        return await messagingCall(method: .PUT, "/message/\(Self.escape(id))", json: json, environment: environment)
    }

    /// `GET …/message/list` (`getMessageList`): `{messageIdentifiers: [{messageIdentifier, messageState}]}`.
    public func messageList(environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await messagingCall("/message/list", environment: environment)
    }

    /// `DELETE …/message/{id}` (`deleteMessage`).
    public func deleteMessage(_ id: String, environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await messagingCall(method: .DELETE, "/message/\(Self.escape(id))", environment: environment)
    }

    /// `PUT …/image/{id}` with the PNG's bytes (`uploadImage`).
    public func uploadImage(_ id: String, png: [UInt8], environment: ServerAPIEnvironment) async -> ServerAPIAnswer {
        await call(
            .retentionMessaging, method: .PUT, path: Self.messaging + "/image/\(Self.escape(id))", body: png, contentType: "image/png",
            environment: environment)
    }

    /// `PUT …/default/{productId}/{locale}` `{messageIdentifier}` (`configureDefaultMessage`).
    public func configureDefaultMessage(
        productID: String, locale: String, messageID: String, environment: ServerAPIEnvironment
    ) async -> ServerAPIAnswer {
        await messagingCall(
            method: .PUT, "/default/\(Self.escape(productID))/\(Self.escape(locale))", json: ["messageIdentifier": messageID],
            environment: environment)
    }

    /// `POST …/performanceTest` `{originalTransactionId}` (`initiatePerformanceTest`, sandbox only):
    /// `{config, requestId}`.
    public func initiatePerformanceTest(originalTransactionID: String) async -> ServerAPIAnswer {
        await messagingCall(method: .POST, "/performanceTest", json: ["originalTransactionId": originalTransactionID], environment: .sandbox)
    }

    /// `GET …/performanceTest/result/{requestId}` (`getPerformanceTestResults`): `{config, target,
    /// result: PENDING | PASS | FAIL, successRate, numPending, responseTimes {average, p50, p90, p95,
    /// p99}, failures?}`.
    public func performanceTestResult(_ requestID: String) async -> ServerAPIAnswer {
        await messagingCall("/performanceTest/result/\(Self.escape(requestID))", environment: .sandbox)
    }
}
