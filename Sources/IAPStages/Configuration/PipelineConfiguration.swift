import AppleJWS
import AppleReceipt
import AppStoreServerAPI
@preconcurrency import Crypto
import Foundation
import IAPSettings
import PipelineCore
import X509

/// Every setting, read through `SettingSource` (flags over `IAP_*` environment variables) as
/// `Settings` describes them: defaults, units and ranges are written there, once. A malformed
/// value is an error naming its variable.
package struct PipelineConfiguration: Sendable {
    /// Where the state lives and how its keys are laid out (`IAP_REDIS_*`, `IAP_PREFIX`, `IAP_BUCKETS`).
    package var redis: RedisSettings
    package var httpHost: String
    /// verifyReceipt's URLs and secret, and every call to Apple's timeout.
    package var verifyReceipt: VerifyReceiptSettings
    /// The App Store Server API's URLs, the single app's key, the fleet's budget and `IAP_RECEIPT_MODE`.
    package var serverAPI: ServerAPISettings
    /// `IAP_OFFER_KEY_ID` and `IAP_OFFER_PRIVATE_KEY_FILE`: the In-App Purchase key that signs offers.
    package var offerKey: AppsFile.OfferKey?
    /// Files of the roots signed data must chain to; empty: Apple Root CA - G3, built in.
    package var appleRootCertFiles: [String]
    package var bundleIDs: Set<String>
    /// `IAP_BUNDLE_IDS` in the order given: the first is the App Store Server API token's `bid`.
    package var bundleIDList: [String]
    /// `IAP_APPS_FILE`: several apps, each with its own secrets and keys; `nil`: one app's settings.
    package var appsFile: AppsFile?
    /// The given path of each of `Settings.secretFiles`, by variable.
    package var secretFilePaths: [String: String]
    /// The app's Apple id: production notifications for another `appAppleId` are refused. Unset: not checked.
    package var appleAppID: Int64?
    package var productsFile: String?
    /// The fleet's Apple breaker (`IAP_APPLE_BREAKER_*`); `nil`: none (every failure spends an attempt).
    package var appleBreaker: AppleBreakerSettings?
    /// `IAP_FULFILMENT_RETENTION_S`, `IAP_DEAD_MAX`, `IAP_DEAD_MAX_AGE_S`: the grant stage trims by them.
    package var retention: RetentionSettings
    /// How a stage worker runs (`IAP_CONCURRENCY`, `IAP_LEASE_MS`, `IAP_MAX_REDELIVERIES`,
    /// `IAP_SHUTDOWN_GRACE_MS`); `concurrency` is also each process's connections to Apple.
    package var worker: WorkerSettings
    /// Retries of Apple's and the webhook's transient failures (`IAP_RETRY_*`, `IAP_MAX_ATTEMPTS`).
    package var retryPolicy: RetryPolicy
    package var ticketTTL: Duration
    /// `IAP_APPLE_ONLINE_CHECKS`: notifications' chains checked at the current time, with OCSP.
    package var appleOnlineChecks: Bool
    /// The intake's own settings (its port, requests, callers, queue bound, TLS).
    package var intake: IntakeSettings
    /// `iap-console`'s listener and sign-ins.
    package var console: ConsoleSettings
    /// The purchase policy's settings (`purchasePolicy()` makes the policy of them).
    package var policy: PurchasePolicySettings
    /// Each app's cutover and what a purchase made before it gets (`IAP_ADOPTED_AT`, `IAP_PRE_ADOPTION`, `adopted_at`).
    package var adoption: Adoption
    /// Set App Account Token, Finish Transaction and the answers to consumption requests.
    package var errands: AppleErrandSettings
    /// How often the fleet's notification and refund sweeps run.
    package var sweeps: SweepSettings
    /// When subscriptions are re-checked with Apple (`IAP_RECHECK_BEFORE_S`, `IAP_RECHECK_AFTER_S`, `IAP_RECHECK_MAX`).
    package var recheck: RecheckSchedule
    /// `iap-webhook`'s settings (`IAP_WEBHOOK_*`).
    package var webhook: WebhookSettings
    /// A stage worker's `/metrics` port; `nil`: none (the intake serves `/metrics` on its own port).
    package var metricsPort: Int?

    /// The settings in `environment` (`IAP_*`; others are ignored) and `flags` (variable → value), flags first.
    package init(
        environment: [String: String] = ProcessInfo.processInfo.environment, flags: [String: String] = [:]
    ) throws(ConfigurationError) {
        try self.init(SettingSource(environment: environment, flags: flags))
    }

    /// Each component reads its own settings; what is read here is shared by several.
    package init(_ source: SettingSource) throws(ConfigurationError) {
        redis = try RedisSettings(reading: source)
        httpHost = source.text(Settings.httpHost)!
        verifyReceipt = try VerifyReceiptSettings(reading: source)
        serverAPI = try ServerAPISettings(reading: source)
        offerKey = try AppsFile.OfferKey.reading(source)
        appleRootCertFiles = source.list(Settings.appleRootCerts)
        secretFilePaths = Dictionary(uniqueKeysWithValues: Settings.secretFiles.compactMap { setting in
            source.given(setting).map { (setting.variable, $0) }
        })
        (bundleIDList, appsFile) = try Self.readApps(source)
        bundleIDs = Set(bundleIDList)
        appleAppID = try source.optionalCount(Settings.appleAppID).map(Int64.init)
        productsFile = source.given(Settings.productsFile)
        worker = try WorkerSettings(reading: source)
        appleBreaker = try AppleBreakerSettings.reading(source)
        retention = try RetentionSettings(reading: source)
        retryPolicy = try RetryPolicy(reading: source)
        ticketTTL = try source.duration(Settings.ticketTTL)
        appleOnlineChecks = try source.choice(Settings.appleOnlineChecks) == "on"
        intake = try IntakeSettings(reading: source)
        console = try ConsoleSettings(reading: source)
        recheck = try RecheckSchedule(reading: source)
        webhook = try WebhookSettings(reading: source)
        policy = try PurchasePolicySettings(reading: source)
        adoption = try Adoption(reading: source, apps: appsFile)
        errands = try AppleErrandSettings(reading: source)
        sweeps = try SweepSettings(reading: source)
        metricsPort = try source.optionalCount(Settings.metricsPort)
    }

    /// `IAP_BUNDLE_IDS` in order, or the apps of `IAP_APPS_FILE` (whose bundle ids are then the ones accepted).
    static func readApps(_ source: SettingSource) throws(ConfigurationError) -> ([String], AppsFile?) {
        let bundleIDs = source.list(Settings.bundleIDs)
        guard let path = source.given(Settings.appsFile) else { return (bundleIDs, nil) }
        let apps = try AppsFile(file: path)
        if !bundleIDs.isEmpty, Set(bundleIDs) != Set(apps.bundleIDs) {
            throw ConfigurationError(
                Settings.bundleIDs.variable, "differs from the apps of IAP_APPS_FILE, whose bundle ids are the ones accepted: unset it")
        }
        return (apps.bundleIDs, apps)
    }

    package var keys: RedisKeys { redis.keys }

    package var apple: AppleVerifierConfiguration {
        AppleVerifierConfiguration(
            productionURL: verifyReceipt.productionURL, sandboxURL: verifyReceipt.sandboxURL, sharedSecret: verifyReceipt.sharedSecret,
            timeout: verifyReceipt.timeout, maxConnections: worker.concurrency)
    }

    /// The verifier refuses to start without the app's bundle ids: it would accept any app's receipts.
    package func requireBundleIDs() throws(ConfigurationError) -> Set<String> {
        guard !bundleIDs.isEmpty else {
            throw ConfigurationError("IAP_BUNDLE_IDS", "required: the comma-separated bundle ids of your apps")
        }
        return bundleIDs
    }

    /// Whether App Store Server API keys are set (a `transaction_id` alone can then be looked up):
    /// the single-app key, or any app's in `IAP_APPS_FILE`.
    package var isServerAPIConfigured: Bool {
        serverAPI.key != nil || appsFile?.apps.contains { $0.serverAPI != nil } == true
    }

    /// Each app's Server API settings, in the order apps are tried: its own key from
    /// `IAP_APPS_FILE`, else the single-app key (`IAP_APPLE_API_*`) with the app's `bid`; apps
    /// with neither are left out. Without an apps file: the single key with the first bundle id.
    package func serverAPIs() throws(ConfigurationError) -> [(bundleID: String, configuration: ServerAPIConfiguration)] {
        let single = serverAPI.key
        guard let appsFile else {
            guard let single else { return [] }
            guard let bundleID = bundleIDList.first else {
                throw ConfigurationError("IAP_BUNDLE_IDS", "required with the App Store Server API: its first id is the token's bid")
            }
            return [(bundleID, try serverAPIConfiguration(single, bundleID: bundleID, variable: Settings.appleAPIPrivateKeyFile.variable))]
        }
        var configurations: [(bundleID: String, configuration: ServerAPIConfiguration)] = []
        for app in appsFile.apps {
            guard let key = app.serverAPI ?? single else { continue }
            let variable = app.serverAPI == nil ? Settings.appleAPIPrivateKeyFile.variable : "IAP_APPS_FILE (\(app.bundleID))"
            configurations.append((app.bundleID, try serverAPIConfiguration(key, bundleID: app.bundleID, variable: variable)))
        }
        return configurations
    }

    private func serverAPIConfiguration(
        _ key: AppsFile.ServerAPIKey, bundleID: String, variable: String
    ) throws(ConfigurationError) -> ServerAPIConfiguration {
        let privateKey = try Self.privateKey(file: key.privateKeyFile, variable: variable)
        return ServerAPIConfiguration(
            productionURL: serverAPI.productionURL, sandboxURL: serverAPI.sandboxURL, keyID: key.keyID, issuerID: key.issuerID,
            privateKey: privateKey, bundleID: bundleID, timeout: verifyReceipt.timeout)
    }

    /// Each app's offer signer, by bundle id: its own `offer_key` from `IAP_APPS_FILE`, else the
    /// single key (`IAP_OFFER_KEY_ID`, `IAP_OFFER_PRIVATE_KEY_FILE`) with the app's bundle id;
    /// without an apps file, the single key for each of `IAP_BUNDLE_IDS`. The JWS kinds' issuer:
    /// the app's Server API `issuer_id`, else `IAP_APPLE_API_ISSUER_ID`. Empty: no offers signed.
    package func offerSigners() throws(ConfigurationError) -> [String: OfferSigner] {
        let single = offerKey
        let apps: [(bundleID: String, key: AppsFile.OfferKey?, issuer: String?)] = appsFile.map { file in
            file.apps.map { ($0.bundleID, $0.offerKey ?? single, $0.serverAPI?.issuerID ?? serverAPI.key?.issuerID) }
        } ?? bundleIDList.map { ($0, single, serverAPI.key?.issuerID) }
        var keys: [String: P256.Signing.PrivateKey] = [:]
        var signers: [String: OfferSigner] = [:]
        for app in apps {
            guard let key = app.key else { continue }
            let variable = app.key == single ? Settings.offerPrivateKeyFile.variable : "IAP_APPS_FILE (\(app.bundleID))"
            let privateKey: P256.Signing.PrivateKey
            if let read = keys[key.privateKeyFile] {
                privateKey = read
            } else {
                privateKey = try Self.privateKey(file: key.privateKeyFile, variable: variable)
                keys[key.privateKeyFile] = privateKey
            }
            signers[app.bundleID] = OfferSigner(keyID: key.keyID, issuerID: app.issuer, bundleID: app.bundleID, privateKey: privateKey)
        }
        return signers
    }

    /// A P-256 private key in PEM (`.p8`), or the error naming `variable`.
    static func privateKey(file path: String, variable: String) throws(ConfigurationError) -> P256.Signing.PrivateKey {
        guard let pem = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else {
            throw ConfigurationError(variable, "cannot read \(path)")
        }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ConfigurationError(variable, "\(path) is not a P-256 private key in PEM (.p8)")
        }
    }

    /// With `IAP_APPS_FILE`: the App Apple ID of each app that names its own (`app_apple_id`).
    package var appAppleIDs: [String: Int64] {
        Dictionary(uniqueKeysWithValues: (appsFile?.apps ?? []).compactMap { app in app.appAppleID.map { (app.bundleID, $0) } })
    }

    /// With `IAP_APPS_FILE`: each app's verifyReceipt secret (its own, else `IAP_APPLE_SHARED_SECRET`),
    /// in the order apps are tried; `nil` for one app.
    package var appSecrets: [(bundleID: String, sharedSecret: String?)]? {
        appsFile.map { file in file.apps.map { ($0.bundleID, $0.sharedSecret ?? verifyReceipt.sharedSecret) } }
    }

    /// The grant stage's Set App Account Token: its errands' ticket lifetime when it is on and the
    /// Server API key is configured (the notifier makes the calls), else `nil`.
    package var appAccountTokenTickets: Duration? {
        errands.setAppAccountTokens && isServerAPIConfigured ? ticketTTL : nil
    }

    /// Whether legacy receipts go to the Server API rather than verifyReceipt (`IAP_RECEIPT_MODE`):
    /// `server_api` without the key is a configuration error.
    package func receiptsByServerAPI() throws(ConfigurationError) -> Bool {
        switch serverAPI.receiptMode {
        case "server_api":
            guard isServerAPIConfigured else {
                throw ConfigurationError(
                    Settings.receiptMode.variable, "server_api needs the App Store Server API key (IAP_APPLE_API_KEY_ID, "
                        + "IAP_APPLE_API_ISSUER_ID, IAP_APPLE_API_PRIVATE_KEY_FILE)")
            }
            return true
        case "auto": return isServerAPIConfigured
        default: return false
        }
    }

    /// The grant stage's Finish Transaction: its errands' ticket lifetime when it is on and the
    /// Server API key is configured (the notifier makes the calls), else `nil`.
    package var finishTransactionTickets: Duration? {
        errands.finishTransactions && isServerAPIConfigured ? ticketTTL : nil
    }

    /// The roots that signed data must chain to: the configured files, else Apple Root CA - G3.
    package func rootCertificates() throws(ConfigurationError) -> [Certificate] {
        guard !appleRootCertFiles.isEmpty else { return [AppleRootCertificates.appleRootCAG3] }
        do {
            return try AppleRootCertificates.load(paths: appleRootCertFiles)
        } catch {
            throw ConfigurationError("IAP_APPLE_ROOT_CERTS", "\(error)")
        }
    }

    /// The deduper refuses to start without a catalog: the product type decides what is granted once.
    /// With `IAP_APPS_FILE`, every app's catalog (its `products_file`, else `IAP_PRODUCTS_FILE`) as one.
    package func requireCatalog() throws(ConfigurationError) -> ProductCatalog {
        guard let appsFile, appsFile.apps.contains(where: { $0.productsFile != nil }) else {
            guard let path = productsFile else {
                throw ConfigurationError("IAP_PRODUCTS_FILE", "required: path of the products JSON file")
            }
            return try Self.catalog(path, variable: "IAP_PRODUCTS_FILE")
        }
        var catalogs: [(name: String, catalog: ProductCatalog)] = []
        for app in appsFile.apps {
            if let path = app.productsFile {
                catalogs.append((app.bundleID, try Self.catalog(path, variable: "IAP_APPS_FILE (\(app.bundleID))")))
            } else if let path = productsFile {
                catalogs.append((app.bundleID, try Self.catalog(path, variable: "IAP_PRODUCTS_FILE")))
            } else {
                throw ConfigurationError("IAP_APPS_FILE", "\(app.bundleID) has no products_file, and IAP_PRODUCTS_FILE is unset")
            }
        }
        do {
            return try ProductCatalog.merged(catalogs)
        } catch {
            throw ConfigurationError("IAP_APPS_FILE", "\(error)")
        }
    }

    /// Whether a catalog is configured (`IAP_PRODUCTS_FILE`, or an app's `products_file`).
    package var hasCatalog: Bool {
        productsFile != nil || appsFile?.apps.contains { $0.productsFile != nil } == true
    }

    private static func catalog(_ path: String, variable: String) throws(ConfigurationError) -> ProductCatalog {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(variable, "cannot read \(path)")
        }
        do {
            return try ProductCatalog(json: data)
        } catch {
            throw ConfigurationError(variable, "\(path) is not a products file: \(error)")
        }
    }

    /// The secret files (`Settings.secretFiles`) that group or others may read: each to be warned
    /// about at start (as ssh refuses such keys; here a warning, so a deployment keeps running).
    package func exposedSecretFiles() -> [(variable: String, path: String)] {
        Settings.secretFiles.compactMap { setting in
            guard let path = secretFilePaths[setting.variable], let mode = FilePermissions.mode(of: path), mode & 0o077 != 0 else {
                return nil
            }
            return (setting.variable, path)
        }
    }

    /// The purchase policy, with `IAP_SANDBOX`'s file of users read (one id a line; `#` starts a comment).
    package func purchasePolicy() throws(ConfigurationError) -> PurchasePolicy { try policy.policy() }
}
