import AppleJWS

/// One app's App Store Server API and the verifier of what Apple signs in its answers: every read
/// of Apple's signed data needs both, and nothing is believed before it is verified.
public struct SignedServerAPI: Sendable {
    public let client: ServerAPIClient
    public let signedData: SignedDataVerifier
}

/// A read of the Server API whose signed answers are verified (a transaction, an order, a
/// customer's history, a subscription's statuses, an app transaction).
public protocol SignedServerAPIReading: Sendable {
    var api: SignedServerAPI { get }
    init(_ api: SignedServerAPI)
}

extension SignedServerAPIReading {
    public init(client: ServerAPIClient, signedData: SignedDataVerifier) {
        self.init(SignedServerAPI(client: client, signedData: signedData))
    }

    public var client: ServerAPIClient { api.client }
    public var signedData: SignedDataVerifier { api.signedData }
}
