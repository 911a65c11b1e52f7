import AppleReceipt

/// How one call to the App Store Server API ended, classified the way the pipeline acts on it.
public enum ServerAPIAnswer: Sendable, Equatable {
    /// 200 with its JSON body.
    case ok([UInt8])
    /// 404 with `errorCode` 4040010: no such transaction in this environment.
    case notFound
    /// 401/403: our key, issuer, bundle id or token is wrong. Alert, never blame the user.
    case unauthorized(status: Int, detail: String)
    /// 4xx that is about the request's content (e.g. 4000006, an invalid transaction id).
    case refused(errorCode: Int, detail: String)
    /// Our setup is wrong in another way (a 4xx that is not Apple's error shape: the URL).
    case misconfigured(detail: String)
    /// Try later: 5xx, 5000001, 4040002/4040004/4040006, timeouts, 429 (with `retryAfterMs`).
    case transient(reason: String, detail: String, retryAfterMs: Int?)
}

extension ServerAPIAnswer {
    /// How a call that did not answer 200 ends a verification: our key refused or our setup wrong
    /// is a dead letter, Apple's refusal of the request a rejection, the rest a retry. `nil` for
    /// `.ok` and `.notFound`, which the caller reads itself.
    public var failureOutcome: VerificationOutcome? {
        switch self {
        case .ok, .notFound:
            return nil
        case .unauthorized(let status, let detail):
            return .misconfigured(
                reason: AppleReason.appleAPIUnauthorized,
                detail: "the App Store Server API refused our token (\(status)): check IAP_APPLE_API_KEY_ID, "
                    + "IAP_APPLE_API_ISSUER_ID, IAP_APPLE_API_PRIVATE_KEY_FILE and IAP_BUNDLE_IDS; \(detail)")
        case .refused(let errorCode, let detail):
            return .rejected(reason: AppleReason.appleAPIError(errorCode), detail: detail)
        case .misconfigured(let detail):
            return .misconfigured(reason: AppleReason.appleAPIMisconfigured, detail: detail)
        case .transient(let reason, let detail, let retryAfterMs):
            return .transient(reason: reason, detail: detail, retryAfterMs: retryAfterMs)
        }
    }
}
