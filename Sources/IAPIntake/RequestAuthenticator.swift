import Crypto
import Foundation
import Hummingbird
import IAPClient
import PipelineCore
import PlainJSON
import NIOCore
import RedisClient

/// Checks a game backend's signature on a guarded route (`RouteAccessMiddleware` decides which):
/// `X-IAP-Key` (key id), `X-IAP-Timestamp` (Unix seconds) and `X-IAP-Signature`, the hex
/// HMAC-SHA256 with the key's secret of `RequestSigner.message`: `timestamp \n method \n target \n
/// body` (the target is the path and query as sent), and the key's scope (`403 forbidden_scope`:
/// `ClientKeys.Scope`). Refusals are 401 with `unauthenticated`, `stale_request` (more than
/// `allowedSkew` off), `bad_signature` or `replayed_request` (a signature seen within twice the
/// skew: remembered in Redis, fleet-wide). A request answered 503 that did nothing has its
/// signature forgotten again, so the backend's retry of it is not taken for a replay. A read
/// (`GET` of a ticket or a user's entitlements) is not remembered: its replay changes nothing, and
/// it then needs no write, so it answers while Redis refuses writes (full, or a replica read).
struct RequestAuthenticator: Sendable {
    static var allowedSkew: Duration { .seconds(300) }

    let keyring: ClientKeyring
    let store: PipelineStore
    let maxBodyBytes: Int

    /// Serves a request to a route of `scope` once its signature holds, with the key on the context.
    func serve(
        _ request: Request, context: IntakeRequestContext, scope: ClientKeys.Scope,
        next: (Request, IntakeRequestContext) async throws -> Response
    ) async throws -> Response {
        var request = request
        var context = context
        let (keyID, scopes, signature) = try await authenticate(&request, for: scope)
        context.clientKey = keyID
        context.clientScopes = scopes
        // Forgotten only for a 503 that did nothing (`IntakeError.spent` false): a support look-up
        // that asked Apple and then failed stays remembered, so its replay spends nothing more.
        do {
            return try await next(request, context)
        } catch let error as IntakeError where error.status == .serviceUnavailable && !error.spent {
            if let signature { await forget(signature) }
            throw error
        }
    }

    /// Best effort: a signature that stays remembered makes the retry a `replayed_request`,
    /// which a backend that signs each attempt anew never meets.
    private func forget(_ signature: String) async {
        _ = try? await store.redis.send("DEL", store.keys.clientSignature(signature))
    }

    /// Whether a request's signature is remembered against replay: every request that can change
    /// or spend something; not a `GET` but a support look-up's (it spends Apple's budget).
    static func remembers(_ method: HTTPRequest.Method, scope: ClientKeys.Scope) -> Bool {
        method != .get || scope == .support
    }

    /// Checks the signature (collecting the body, which stays on the request for the route) and
    /// returns the key id and, when remembered (`remembers`), the signature, lowercased.
    func authenticate(
        _ request: inout Request, for scope: ClientKeys.Scope
    ) async throws -> (keyID: String, scopes: Set<ClientKeys.Scope>, signature: String?) {
        guard let keyID = request.header("x-iap-key"), let timestamp = request.header("x-iap-timestamp"),
            let signature = request.header("x-iap-signature")
        else {
            throw IntakeError(.unauthorized, "unauthenticated", "sign the request: X-IAP-Key, X-IAP-Timestamp and X-IAP-Signature")
        }
        // One snapshot of the keys for the whole check (a SIGHUP may swap them meanwhile).
        let keys = keyring.current
        guard let key = keys.key(keyID) else {
            throw IntakeError(.unauthorized, "unauthenticated", "X-IAP-Key names no key this intake knows")
        }
        guard timestamp.utf8.count <= 12, timestamp.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let seconds = Int64(timestamp)
        else {
            throw IntakeError(.unauthorized, "stale_request", "X-IAP-Timestamp must be Unix time in seconds")
        }
        let now = Int64(Date().timeIntervalSince1970)
        guard abs(now - seconds) <= Self.allowedSkew.components.seconds else {
            throw IntakeError(.unauthorized, "stale_request", "X-IAP-Timestamp is more than 300 s from the intake's clock")
        }
        guard let mac = Hex.decode(signature), mac.count == SHA256.byteCount else {
            throw IntakeError(.unauthorized, "bad_signature", "X-IAP-Signature must be 64 hex digits")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBodyBytes {
            throw IntakeRoutes.tooLarge(maxBodyBytes)
        }
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: maxBodyBytes)
        } catch is NIOTooManyBytesError {
            throw IntakeRoutes.tooLarge(maxBodyBytes)
        }
        guard RequestSigner.isValid(
            mac: mac, method: request.method.rawValue, target: request.uri.string, body: body.readableBytesView,
            timestamp: timestamp, key: key)
        else {
            throw IntakeError(.unauthorized, "bad_signature", "X-IAP-Signature does not match the request")
        }
        let scopes = keys.scopes(keyID)
        guard scopes.contains(scope) else {
            throw IntakeError(.forbidden, "forbidden_scope", "key '\(keyID)' may not call the \(scope.rawValue) routes")
        }
        guard Self.remembers(request.method, scope: scope) else { return (keyID, scopes, nil) }
        // Remembered for twice the skew: a timestamp up to 300 s ahead stays valid until 300 s after it.
        let remembered = signature.lowercased()
        let seen: RedisReply
        do {
            seen = try await store.redis.send(
                "SET", store.keys.clientSignature(remembered), keyID, "NX", "EX", String(2 * Self.allowedSkew.components.seconds))
        } catch {
            throw IntakeError.redis(error, "the request cannot be checked right now; try again")
        }
        guard seen != .null else {
            throw IntakeError(.unauthorized, "replayed_request", "this signature was used already: sign each request anew")
        }
        return (keyID, scopes, remembered)
    }
}
