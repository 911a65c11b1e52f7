import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PlainJSON

/// A game backend's client of the intake (docs/http-api.md), for Swift servers: each request
/// signed afresh with the backend's key (`IAP_CLIENT_KEYS_FILE`; a replayed signature is refused),
/// the answers read into small types with the whole JSON beside them, every refusal thrown as a
/// `PipelineClientError` with the intake's code. A `503` or `429` stored nothing, so it is sent
/// again (signed anew) after its `Retry-After`, up to `maxAttempts`: a submission resent is the
/// same ticket, never a second grant. Links nothing of the pipeline.
public struct PipelineClient: Sendable {
    /// The intake, `https://iap.example.com` (no trailing slash needed).
    public let baseURL: String
    /// `nil` for an intake run open on a private network (`IAP_INTAKE_EXPOSURE=open`).
    public let signer: RequestSigner?
    public var maxAttempts: Int
    /// Each HTTP exchange; a long poll adds its wait to it.
    public var timeout: Duration
    /// The longest pause honoured from a `Retry-After`.
    public var longestPause: Duration = .seconds(5)
    private let http: HTTPClient

    public init(
        baseURL: String, signer: RequestSigner?, httpClient: HTTPClient = .shared, maxAttempts: Int = 3,
        timeout: Duration = .seconds(15)
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.signer = signer
        self.http = httpClient
        self.maxAttempts = max(maxAttempts, 1)
        self.timeout = timeout
    }

    /// An answer: its status, its JSON (`.null` when empty) and its `Location`.
    struct Reply: Sendable {
        var status: Int
        var json: JSONValue
        var location: String?
    }

    /// One call, tried again while the intake answers 503 or 429.
    func call(_ method: HTTPMethod, _ target: String, body: JSONValue? = nil, wait: Duration = .zero) async throws -> Reply {
        let bytes = body.map { Array($0.canonicalText.utf8) } ?? []
        var attempt = 1
        while true {
            let reply = try await send(method, target, bytes, timeout: timeout + wait)
            if (200..<300).contains(reply.status) { return reply.reply }
            let error = PipelineClientError(status: reply.status, json: reply.reply.json, retryAfter: reply.retryAfter)
            guard attempt < maxAttempts, let pause = pause(after: error) else { throw error }
            try await Task.sleep(for: pause)
            attempt += 1
        }
    }

    /// How long to wait before sending a refused request again, or `nil` to give up.
    /// `replayed_request`: the same request (method, target, body) was signed within the same
    /// second, so its signature is the same; signed again in the next second it differs. Every
    /// route takes a repeat (a submission is the same ticket, a PUT the same value).
    private func pause(after error: PipelineClientError) -> Duration? {
        if error.code == "replayed_request" {
            let fraction = Date().timeIntervalSince1970.truncatingRemainder(dividingBy: 1)
            return .milliseconds(Int64((1 - fraction) * 1000) + 5)
        }
        return error.isRetryable ? min(error.retryAfter ?? .seconds(1), longestPause) : nil
    }

    private func send(
        _ method: HTTPMethod, _ target: String, _ body: [UInt8], timeout: Duration
    ) async throws -> (status: Int, reply: Reply, retryAfter: Duration?) {
        var request = HTTPClientRequest(url: baseURL + target)
        request.method = method
        if !body.isEmpty {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        if let signer {
            let now = Int64(Date().timeIntervalSince1970)
            for (name, value) in signer.headers(method: method.rawValue, target: target, body: body, timestamp: now) {
                request.headers.add(name: name, value: value)
            }
        }
        let response = try await http.execute(request, timeout: .nanoseconds(Self.nanoseconds(timeout)))
        let bytes = try await response.body.collect(upTo: 8 << 20)
        let json = bytes.readableBytes == 0 ? JSONValue.null : (try? JSONValue(parsing: Array(bytes.readableBytesView))) ?? .null
        let status = Int(response.status.code)
        let retryAfter = response.headers.first(name: "Retry-After").flatMap { Int64($0) }.map { Duration.seconds($0) }
        return (status, Reply(status: status, json: json, location: response.headers.first(name: "Location")), retryAfter)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    /// `value` as one path segment: what RFC 3986 allows in a segment stays, the rest is
    /// percent-encoded (the intake refuses an encoded letter or digit, so nothing more is).
    static func segment(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: segmentCharacters) ?? value
    }

    private static let segmentCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@")
}
