import Foundation
import IAPSettings
import PipelineCore
import PlainJSON

/// `IAP_APPS_FILE`: the apps one pipeline serves, keyed by bundle id, each with what it does not
/// share with the others. Every member is optional: an app without one uses the single-app setting
/// (`IAP_APPLE_SHARED_SECRET`, `IAP_APPLE_API_*`, `IAP_APP_APPLE_ID`, `IAP_PRODUCTS_FILE`).
///
/// ```json
/// {"com.acme.game": {"shared_secret": "…", "app_apple_id": 1234,
///                    "server_api": {"key_id": "…", "issuer_id": "…", "private_key_file": "…"},
///                    "offer_key": {"key_id": "…", "private_key_file": "…"},
///                    "products_file": "…", "adopted_at": "2026-11-01T00:00:00Z"}}
/// ```
package struct AppsFile: Sendable, Equatable {
    /// One app's own settings.
    package struct App: Sendable, Equatable {
        package var bundleID: String
        /// verifyReceipt's `password` for this app's receipts (never logged).
        package var sharedSecret: String?
        /// The app's Apple ID: its notifications must name it.
        package var appAppleID: Int64?
        /// Its App Store Server API key: every token for this app carries its `bid`.
        package var serverAPI: ServerAPIKey?
        /// Its In-App Purchase key for offer signatures (`offer_key`).
        package var offerKey: OfferKey?
        package var productsFile: String?
        /// When the app moved onto the pipeline (ms; `adopted_at`, ISO 8601): purchases made before
        /// it are pre-adoption (`Adoption`); `nil`: `IAP_ADOPTED_AT`, or none.
        package var adoptedAt: Int64?

    }

    /// An App Store Server API key: its id, its issuer and the `.p8` file.
    package struct ServerAPIKey: Sendable, Equatable {
        package var keyID: String
        package var issuerID: String
        package var privateKeyFile: String
    }

    /// An In-App Purchase key that signs offers: its id and the `.p8` file.
    package struct OfferKey: Sendable, Equatable {
        package var keyID: String
        package var privateKeyFile: String

        /// The single key (`IAP_OFFER_KEY_ID`, `IAP_OFFER_PRIVATE_KEY_FILE`: both or neither); `nil`: none set.
        package static func reading(_ source: SettingSource) throws(ConfigurationError) -> OfferKey? {
            let given = try source.together(
                [Settings.offerKeyID, Settings.offerPrivateKeyFile], "the other (the In-App Purchase key's id and its .p8 file)")
            guard let id = given[0], let file = given[1] else { return nil }
            return OfferKey(keyID: id, privateKeyFile: file)
        }
    }

    /// In bundle-id order: the order apps are tried in when a request names none.
    package var apps: [App]

    package init(apps: [App]) {
        self.apps = apps.sorted { $0.bundleID < $1.bundleID }
    }

    package var bundleIDs: [String] { apps.map(\.bundleID) }

    package func app(_ bundleID: String) -> App? { apps.first { $0.bundleID == bundleID } }

    static let variable = "IAP_APPS_FILE"
    static let appMembers: Set<String> = ["shared_secret", "app_apple_id", "server_api", "offer_key", "products_file", "adopted_at"]
    static let offerKeyMembers: Set<String> = ["key_id", "private_key_file"]
    static let keyMembers: Set<String> = ["key_id", "issuer_id", "private_key_file"]

    /// Reads and checks the file; every problem is one `ConfigurationError` naming the app and member.
    package init(file path: String, now: Date = Date()) throws(ConfigurationError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(Self.variable, "cannot read \(path)")
        }
        try self.init(text: String(decoding: data, as: UTF8.self), now: now)
    }

    /// `now`: a cutover (`adopted_at`) after it is refused.
    package init(text: String, now: Date = Date()) throws(ConfigurationError) {
        func fail(_ problem: String) -> ConfigurationError { ConfigurationError(Self.variable, problem) }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(text.utf8))
        } catch {
            throw fail("not JSON: \(error)")
        }
        guard let members = json.object else { throw fail("is not a JSON object keyed by bundle id") }
        guard !members.isEmpty else { throw fail("names no app") }
        var apps: [App] = []
        for (bundleID, value) in members {
            guard Self.isBundleID(bundleID) else { throw fail("\"\(bundleID.prefix(64))\" is not a bundle id (like com.acme.game)") }
            guard let fields = value.object else { throw fail("\(bundleID): is not an object") }
            if let unknown = fields.keys.sorted().first(where: { !Self.appMembers.contains($0) }) {
                throw fail("\(bundleID): unknown member \"\(unknown)\" (known: \(Self.appMembers.sorted().joined(separator: ", ")))")
            }
            var app = App(bundleID: bundleID)
            do {
                app.sharedSecret = try value.stringIfPresent("shared_secret")
                app.appAppleID = try value.int64IfPresent("app_apple_id")
                app.productsFile = try value.stringIfPresent("products_file")
            } catch {
                throw fail("\(bundleID): \(error)")
            }
            app.adoptedAt = try Self.adoptedAt(value, of: bundleID, now: now)
            if app.sharedSecret?.isEmpty == true { throw fail("\(bundleID): shared_secret is empty") }
            if let id = app.appAppleID, id <= 0 { throw fail("\(bundleID): app_apple_id must be a positive number") }
            if let key = fields["server_api"] {
                guard let keyFields = key.object else { throw fail("\(bundleID): server_api is not an object") }
                if let unknown = keyFields.keys.sorted().first(where: { !Self.keyMembers.contains($0) }) {
                    throw fail("\(bundleID): server_api: unknown member \"\(unknown)\"")
                }
                do {
                    app.serverAPI = ServerAPIKey(
                        keyID: try key.string("key_id"), issuerID: try key.string("issuer_id"),
                        privateKeyFile: try key.string("private_key_file"))
                } catch {
                    throw fail("\(bundleID): server_api needs key_id, issuer_id and private_key_file: \(error)")
                }
            }
            if let key = fields["offer_key"] {
                guard let keyFields = key.object else { throw fail("\(bundleID): offer_key is not an object") }
                if let unknown = keyFields.keys.sorted().first(where: { !Self.offerKeyMembers.contains($0) }) {
                    throw fail("\(bundleID): offer_key: unknown member \"\(unknown)\"")
                }
                do {
                    app.offerKey = OfferKey(keyID: try key.string("key_id"), privateKeyFile: try key.string("private_key_file"))
                } catch {
                    throw fail("\(bundleID): offer_key needs key_id and private_key_file: \(error)")
                }
            }
            apps.append(app)
        }
        self.init(apps: apps)
    }

    /// An app's `adopted_at`: an ISO 8601 time not after `now`.
    static func adoptedAt(_ app: JSONValue, of bundleID: String, now: Date) throws(ConfigurationError) -> Int64? {
        guard let member = app.object?["adopted_at"] else { return nil }
        guard let text = member.string, let at = Adoption.parse(text) else {
            throw ConfigurationError(Self.variable, "\(bundleID): adopted_at is not an ISO 8601 time (like 2026-11-01T00:00:00Z)")
        }
        guard at <= Adoption.milliseconds(now) else {
            throw ConfigurationError(
                Self.variable, "\(bundleID): adopted_at is in the future: every purchase made until then would be taken for one already granted")
        }
        return at
    }

    /// Reverse-DNS: letters, digits, `-` and `.`, at most 155 characters (App Store Connect's limit).
    static func isBundleID(_ text: String) -> Bool {
        (1...155).contains(text.utf8.count) && text.contains(".")
            && text.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "-" || $0 == "." }
    }
}
