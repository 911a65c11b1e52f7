import X509

/// An OCSP requester of any kind, for `SignedDataVerifier.OnlineChecks` (which is not generic):
/// the transport is the caller's (the pipeline's is HTTP, `OCSPHTTPRequester`).
public struct AnyOCSPRequester: OCSPRequester {
    private let send: @Sendable ([UInt8], String) async -> OCSPRequesterQueryResult

    public init(_ send: @escaping @Sendable (_ request: [UInt8], _ uri: String) async -> OCSPRequesterQueryResult) {
        self.send = send
    }

    public func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
        await send(request, uri)
    }
}
