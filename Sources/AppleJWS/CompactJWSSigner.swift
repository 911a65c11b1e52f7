@preconcurrency import Crypto
import Foundation

/// Signs payloads as compact ES256 JWS with a fixed header: the App Store Server API's JWTs
/// (`kid`, `typ`) and, in apple-sim and tests, Apple-shaped signed data (`x5c`).
public struct CompactJWSSigner: Sendable {
    public let key: P256.Signing.PrivateKey
    public let header: Header
    private let headerSegment: String

    public struct Header: Codable, Sendable, Equatable {
        public var alg: String
        public var kid: String?
        public var typ: String?
        public var x5c: [String]?

        public init(alg: String = "ES256", kid: String? = nil, typ: String? = nil, x5c: [String]? = nil) {
            self.alg = alg
            self.kid = kid
            self.typ = typ
            self.x5c = x5c
        }
    }

    public init(key: P256.Signing.PrivateKey, header: Header) {
        self.key = key
        self.header = header
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A struct of strings always encodes.
        headerSegment = Base64URL.encode(try! encoder.encode(header))
    }

    public func sign(payload: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try sign(payloadBytes: encoder.encode(payload))
    }

    public func sign(payloadBytes: Data) throws -> String {
        let signingInput = headerSegment + "." + Base64URL.encode(payloadBytes)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
