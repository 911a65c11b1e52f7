import Crypto
import Foundation
import IAPPipeline
import PlainJSON

/// The game backends allowed to call the intake: key id → HMAC secret, from `IAP_CLIENT_KEYS_FILE`
/// (`{"backend-1": "secret…", …}`).
public struct ClientKeys: Sendable {
    /// Secrets shorter than this are refused: a guessable key signs anything.
    public static let minimumSecretBytes = 16
    private let secrets: [String: [UInt8]]

    public var ids: [String] { secrets.keys.sorted() }

    public init(_ secrets: [String: String]) throws(ConfigurationError) {
        guard !secrets.isEmpty else { throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "names no key") }
        var keys: [String: [UInt8]] = [:]
        for (id, secret) in secrets {
            guard !id.isEmpty, id.utf8.count <= 128, id.allSatisfy({ !$0.isWhitespace && !$0.isNewline }) else {
                throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "a key id must be 1 to 128 characters without spaces")
            }
            guard secret.utf8.count >= Self.minimumSecretBytes else {
                throw ConfigurationError(
                    "IAP_CLIENT_KEYS_FILE", "the secret of key '\(id)' is shorter than \(Self.minimumSecretBytes) bytes")
            }
            keys[id] = Array(secret.utf8)
        }
        self.secrets = keys
    }

    /// Reads the file: a JSON object of key id → secret (a string).
    public static func load(file: String) throws(ConfigurationError) -> ClientKeys {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "cannot read \(file)")
        }
        guard case .object(let members)? = try? JSONValue(parsing: Array(data)) else {
            throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "\(file) is not a JSON object of key id → secret")
        }
        var secrets: [String: String] = [:]
        for (id, value) in members {
            guard case .string(let secret) = value else {
                throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "the secret of key '\(id)' in \(file) is not a string")
            }
            secrets[id] = secret
        }
        return try ClientKeys(secrets)
    }

    func key(_ id: String) -> SymmetricKey? { secrets[id].map { SymmetricKey(data: $0) } }
}
