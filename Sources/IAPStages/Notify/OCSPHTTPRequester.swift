import AppleJWS
import AsyncHTTPClient
import NIOCore
import X509

/// Asks an OCSP responder over HTTP (RFC 6960 appendix A: a POST of the DER request): what
/// `IAP_APPLE_ONLINE_CHECKS` uses. OCSP answers are signed by the issuer, so plain HTTP (Apple's
/// responders' own scheme) is enough. A responder that cannot be reached, or answers other than
/// 200, is not a refusal (`nonTerminalError`): only a signed "revoked" is.
package enum OCSPHTTPRequester {
    package static func make(timeout: Duration = .seconds(5), client: HTTPClient = .shared) -> AnyOCSPRequester {
        AnyOCSPRequester { request, uri in
            switch await fetch(request, from: uri, timeout: timeout, client: client) {
            case .success(let answer): .response(answer)
            case .failure(let error): .nonTerminalError(error)
            }
        }
    }

    /// One POST of `request` to `uri`: the responder's DER answer, or why there is none.
    package static func fetch(
        _ request: [UInt8], from uri: String, timeout: Duration = .seconds(5), client: HTTPClient = .shared
    ) async -> Result<[UInt8], any Error> {
        var post = HTTPClientRequest(url: uri)
        post.method = .POST
        post.headers.add(name: "Content-Type", value: "application/ocsp-request")
        post.headers.add(name: "Accept", value: "application/ocsp-response")
        post.body = .bytes(ByteBuffer(bytes: request))
        do {
            let response = try await client.execute(post, timeout: .init(timeout))
            let body = try await response.body.collect(upTo: 64 << 10)
            guard response.status == .ok else { return .failure(Unanswered("HTTP \(response.status.code)")) }
            return .success(Array(body.readableBytesView))
        } catch {
            return .failure(error)
        }
    }

    struct Unanswered: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
