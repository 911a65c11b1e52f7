import Crypto
import Foundation
import IAPSettings
import PlainJSON

/// The game backends allowed to call the intake, from `IAP_CLIENT_KEYS_FILE`: key id → HMAC
/// secret and the routes it may call. An entry is the secret alone (`"backend-1": "secret…"`:
/// scopes `receipts`, `users` and `offers`) or `{"secret": "…", "scopes": ["receipts", "users", "support"]}`.
package struct ClientKeys: Sendable {
    /// Secrets shorter than this are refused: a guessable key signs anything.
    package static let minimumSecretBytes = 16

    /// What a key may call: `receipts` (`/v1/receipts…`), `users` (`/v1/users/…`), `offers`
    /// (`/v1/offers/…`: offer signatures), `support` (`/v1/support/…`: purchases looked up at Apple
    /// and in the books), `reports` (`/v1/reports/…`: the business's figures; a finance tool's key).
    package enum Scope: String, Sendable, CaseIterable, Comparable {
        case receipts, users, offers, support, reports

        /// The scope of a key given as its secret alone: a game backend's.
        package static let standard: Set<Scope> = [.receipts, .users, .offers]

        package static func < (lhs: Scope, rhs: Scope) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    package struct Key: Sendable {
        package var secret: [UInt8]
        package var scopes: Set<Scope>

        package init(secret: String, scopes: Set<Scope> = Scope.standard) {
            self.secret = Array(secret.utf8)
            self.scopes = scopes
        }
    }

    private let keys: [String: Key]

    package var ids: [String] { keys.keys.sorted() }

    package init(_ secrets: [String: String]) throws(ConfigurationError) {
        try self.init(keys: secrets.mapValues { Key(secret: $0) })
    }

    package init(keys: [String: Key]) throws(ConfigurationError) {
        guard !keys.isEmpty else { throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "names no key") }
        for (id, key) in keys {
            guard !id.isEmpty, id.utf8.count <= 128, id.allSatisfy({ !$0.isWhitespace && !$0.isNewline }) else {
                throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "a key id must be 1 to 128 characters without spaces")
            }
            guard key.secret.count >= Self.minimumSecretBytes else {
                throw ConfigurationError(
                    "IAP_CLIENT_KEYS_FILE", "the secret of key '\(id)' is shorter than \(Self.minimumSecretBytes) bytes")
            }
            guard !key.scopes.isEmpty else {
                throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "key '\(id)' has no scope: give it one of receipts, users, offers, support, reports")
            }
        }
        self.keys = keys
    }

    /// Reads the file: a JSON object of key id → secret (a string), or → `{"secret", "scopes"}`.
    package static func load(file: String) throws(ConfigurationError) -> ClientKeys {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "cannot read \(file)")
        }
        guard case .object(let members)? = try? JSONValue(parsing: Array(data)) else {
            throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "\(file) is not a JSON object of key id → secret")
        }
        var keys: [String: Key] = [:]
        for (id, value) in members {
            switch value {
            case .string(let secret):
                keys[id] = Key(secret: secret)
            case .object(let entry):
                guard case .string(let secret)? = entry["secret"] else {
                    throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "key '\(id)' in \(file) has no \"secret\" string")
                }
                if let unknown = entry.keys.first(where: { $0 != "secret" && $0 != "scopes" }) {
                    throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "key '\(id)' in \(file) has an unknown member \"\(unknown)\"")
                }
                var scopes = Scope.standard
                if let given = entry["scopes"] {
                    guard case .array(let names) = given else {
                        throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "the scopes of key '\(id)' in \(file) are not an array")
                    }
                    scopes = []
                    for name in names {
                        guard case .string(let text) = name, let scope = Scope(rawValue: text) else {
                            throw ConfigurationError(
                                "IAP_CLIENT_KEYS_FILE",
                                "key '\(id)' in \(file) names a scope that is none of \(Scope.allCases.map(\.rawValue).joined(separator: ", "))")
                        }
                        scopes.insert(scope)
                    }
                }
                keys[id] = Key(secret: secret, scopes: scopes)
            default:
                throw ConfigurationError("IAP_CLIENT_KEYS_FILE", "the secret of key '\(id)' in \(file) is not a string")
            }
        }
        return try ClientKeys(keys: keys)
    }

    func key(_ id: String) -> SymmetricKey? { keys[id].map { SymmetricKey(data: $0.secret) } }

    func scopes(_ id: String) -> Set<Scope> { keys[id]?.scopes ?? [] }
}
