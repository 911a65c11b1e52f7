import AppleJWS
import AppleReceipt
import AppleSimulator
@preconcurrency import Crypto
import Foundation
import IAPOperations
import IAPSettings
import IAPStages
import PipelineCore
import PipelineTestSupport
import TestSupport
import Testing

/// Several apps from one pipeline (`IAP_APPS_FILE`): each app's receipts are asked with its own
/// shared secret and its transactions with its own Server API key (tokens carrying its `bid`),
/// tried app by app unless the client names its `bundle_id`; what Apple answers must be of the
/// app that asked.
@Suite(.serialized) struct ManyAppsTests {
    static let game = PipelineHarness.bundleID
    static let other = "com.example.other"

    /// Writes the two apps' keys and the apps file; returns its path and the keys.
    static func appsFile() throws -> (path: String, gameKey: P256.Signing.PrivateKey, otherKey: P256.Signing.PrivateKey) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let gameKey = P256.Signing.PrivateKey()
        let otherKey = P256.Signing.PrivateKey()
        let gamePath = directory.appendingPathComponent("game.p8").path
        let otherPath = directory.appendingPathComponent("other.p8").path
        try gameKey.pemRepresentation.write(toFile: gamePath, atomically: true, encoding: .utf8)
        try otherKey.pemRepresentation.write(toFile: otherPath, atomically: true, encoding: .utf8)
        let apps: [String: Any] = [
            game: ["shared_secret": "secret-of-the-game", "server_api": ["key_id": "GAMEKEY001", "issuer_id": "issuer-game", "private_key_file": gamePath]],
            other: ["shared_secret": "secret-of-the-other", "server_api": ["key_id": "OTHERKEY01", "issuer_id": "issuer-other", "private_key_file": otherPath]],
        ]
        let path = directory.appendingPathComponent("apps.json").path
        try JSONSerialization.data(withJSONObject: apps).write(to: URL(fileURLWithPath: path))
        return (path, gameKey, otherKey)
    }

    @Test func twoAppsWithTheirOwnKeysAndSecretsVerifySideBySide() async throws {
        let (path, gameKey, otherKey) = try Self.appsFile()
        try await withPipeline(serverAPI: true, environment: ["IAP_APPS_FILE": path, "IAP_BUNDLE_IDS": ""]) { pipeline in
            let simulator = pipeline.simulator
            simulator.setApp(Self.game, sharedSecret: "secret-of-the-game", apiPublicKey: gameKey.publicKey)
            simulator.setApp(Self.other, sharedSecret: "secret-of-the-other", apiPublicKey: otherKey.publicKey)

            // Receipts: the game's is asked once (its app comes first); the other's with the game's
            // secret first (21004), then its own; named, with its own alone.
            var calls = simulator.requestCount
            let first = try await pipeline.terminal(try await pipeline.submit(receipt([gold("3000000000000001")])))
            #expect(first.status == .granted && simulator.requestCount - calls == 1)
            calls = simulator.requestCount
            let second = try await pipeline.terminal(
                try await pipeline.submit(receipt([gold("3000000000000002")], bundleID: Self.other)))
            #expect(second.status == .granted, "\(second)")
            #expect(simulator.requestCount - calls == 2)
            calls = simulator.requestCount
            let named = try await pipeline.post([
                "receipt_data": receipt([gold("3000000000000003")], bundleID: Self.other).receiptData(), "user_id": "player-1",
                "bundle_id": Self.other,
            ])
            #expect(named.status == 202)
            #expect(try await pipeline.terminal(try #require(named.json["ticket"] as? String)).status == .granted)
            #expect(simulator.requestCount - calls == 1)

            // A transaction id alone: the other app's is not the game's to see (404 in both
            // environments), then found with the other app's key.
            var transaction = SignedFixture.transaction("3000000000000004", bundleID: Self.other)
            transaction.appAccountToken = nil
            try simulator.serverAPI.register(transaction)
            let token = UUID().uuidString.lowercased()
            #expect(try await pipeline.bind(token: token, to: "player-2").status == 200)
            let looked = try await pipeline.post(["transaction_id": "3000000000000004", "user_id": "player-2"])
            #expect(looked.status == 202)
            let found = try await pipeline.terminal(try #require(looked.json["ticket"] as? String))
            #expect(found.status == .granted, "\(found)")
            #expect(simulator.serverAPI.callCounts()["Production transaction_info"] == 2)
            #expect(simulator.serverAPI.callCounts()["Sandbox transaction_info"] == 1)
            // Its app account token is set with the other app's key (apple-sim checks it by the bid).
            let errand = try await pipeline.terminal("token-3000000000000004")
            #expect(errand.status == .applied && errand.result == "app_account_token_set", "\(errand)")
            #expect(simulator.serverAPI.appAccountTokensSet(originalTransactionID: "3000000000000004") == [token])

            // The support desk finds the other app's order and transaction with its key.
            let support = SupportLookup(
                store: pipeline.store, catalog: PipelineHarness.catalog, clients: pipeline.appClients.map(\.client),
                signedData: SignedDataVerifier(rootCertificates: try pipeline.configuration.rootCertificates()))
            var ordered = SignedFixture.transaction("3000000000000007", bundleID: Self.other)
            ordered.appAccountToken = nil
            try simulator.serverAPI.register(ordered, orderID: "MK5TZ8Q2R9")
            let order = try await support.order("MK5TZ8Q2R9").get()
            #expect(order.purchases.map(\.transaction.transactionID) == ["3000000000000007"])
            let byID = try await support.transaction("3000000000000004").get()
            #expect(byID.purchases.first?.grant["user_id"] == "player-2")
            if case .failure(let failure) = await support.order("NOSUCHORDER1") {
                #expect(failure.code == "order_not_found")
            } else {
                Issue.record("an order no app knows was found")
            }

            // Named for the wrong app: Apple's answer is of another app than the client said.
            let wrong = try await pipeline.post([
                "signed_transaction": try pipeline.authority.signer.sign(payload: SignedFixture.transaction("3000000000000005")),
                "user_id": "player-1", "bundle_id": Self.other,
            ])
            let mismatch = try await pipeline.terminal(try #require(wrong.json["ticket"] as? String))
            #expect(mismatch.status == .rejected && mismatch.reason == "bundle_mismatch")
            // An app the deployment does not serve: refused at the door.
            let unknown = try await pipeline.post(["transaction_id": "3000000000000006", "user_id": "player-1", "bundle_id": "com.not.ours"])
            #expect(unknown.status == 400 && (unknown.json["error"] as? [String: Any])?["code"] as? String == "unknown_bundle_id")
        }
    }

    /// Apple's notification history is per app: the sweep reads each app's with its key, under
    /// its own cursors.
    @Test func eachAppsHistoryIsSweptWithItsOwnKeyAndCursors() async throws {
        let (path, gameKey, otherKey) = try Self.appsFile()
        try await withPipeline(serverAPI: true, environment: ["IAP_APPS_FILE": path, "IAP_BUNDLE_IDS": ""]) { pipeline in
            pipeline.simulator.setApp(Self.game, sharedSecret: nil, apiPublicKey: gameKey.publicKey)
            pipeline.simulator.setApp(Self.other, sharedSecret: nil, apiPublicKey: otherKey.publicKey)
            let sweeper = try #require(try NotificationSweeper.make(pipeline.configuration, store: pipeline.store, logger: testLogger))
            defer { Task { for app in sweeper.walks { await app.walk.client.shutdown() } } }
            #expect(sweeper.walks.map(\.cursor) == ["\(Self.game):", "\(Self.other):"])
            guard case .swept(let reports) = await sweeper.turn() else {
                Issue.record("the first turn did not sweep")
                return
            }
            #expect(reports.count == 4 && reports.allSatisfy(\.complete), "\(reports)")
            let state = try await pipeline.store.notificationSweepState()
            for app in [Self.game, Self.other] {
                for environment in ["Production", "Sandbox"] { #expect(state["cursor:\(app):\(environment)"] != nil, "\(app) \(environment)") }
            }
            #expect(pipeline.simulator.serverAPI.callCounts()["Production notification_history"] == 2)
        }
    }

    @Test func anAppsFileThatCannotBeTrustedIsRefusedAtStart() throws {
        for (text, problem) in [
            ("[]", "is not a JSON object"), ("{}", "names no app"), (#"{"game": {}}"#, "is not a bundle id"),
            (#"{"com.a.b": {"secret": "x"}}"#, "unknown member \"secret\""),
            (#"{"com.a.b": {"shared_secret": 5}}"#, "shared_secret"),
            (#"{"com.a.b": {"server_api": {"key_id": "K"}}}"#, "server_api needs key_id, issuer_id and private_key_file"),
            (#"{"com.a.b": {"app_apple_id": -3}}"#, "app_apple_id must be a positive number"),
            (#"{"com.a.b": {"offer_key": {"key_id": "K"}}}"#, "offer_key needs key_id and private_key_file"),
            (#"{"com.a.b": {"offer_key": {"key_id": "K", "private_key_file": "f", "issuer_id": "i"}}}"#, "offer_key: unknown member"),
        ] {
            #expect {
                try AppsFile(text: text)
            } throws: { error in
                (error as? ConfigurationError)?.problem.contains(problem) == true
            }
        }
        let apps = try AppsFile(text: #"{"com.b.b": {"shared_secret": "s"}, "com.a.a": {"app_apple_id": 12}}"#)
        #expect(apps.bundleIDs == ["com.a.a", "com.b.b"])
        #expect(apps.app("com.a.a")?.appAppleID == 12 && apps.app("com.b.b")?.sharedSecret == "s")
    }

    /// Each app's `products_file` joins one catalog; a product id two apps define differently is
    /// refused at start (a purchase is granted by its product id).
    @Test func theAppsCatalogsJoinAndAProductDefinedTwiceDifferentlyIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("catalogs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func write(_ name: String, _ text: String) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let gems = try write("gems.json", #"{"products": {"gems.100": {"type": "consumable"}, "shared.vip": {"type": "non_consumable"}}}"#)
        let pass = try write("pass.json", #"{"products": {"pass.month": {"type": "auto_renewable"}, "shared.vip": {"type": "non_consumable"}}}"#)
        let clash = try write("clash.json", #"{"products": {"gems.100": {"type": "non_consumable"}}}"#)
        func configuration(_ other: String) throws -> PipelineConfiguration {
            let apps = try write("apps-\(UUID().uuidString).json", """
                {"com.example.game": {"products_file": "\(gems)"}, "com.example.other": {"products_file": "\(other)"}}
                """)
            return try PipelineConfiguration(environment: ["IAP_APPS_FILE": apps])
        }
        let joined = try configuration(pass)
        #expect(joined.bundleIDList == ["com.example.game", "com.example.other"] && joined.hasCatalog)
        let catalog = try joined.requireCatalog()
        #expect(catalog.products == ["gems.100": .consumable, "shared.vip": .nonConsumable, "pass.month": .autoRenewable])
        #expect {
            try configuration(clash).requireCatalog()
        } throws: { error in
            (error as? ConfigurationError)?.problem.contains("gems.100 is defined differently by com.example.game and com.example.other") == true
        }
        // IAP_BUNDLE_IDS may only repeat the apps file's bundle ids.
        #expect(throws: ConfigurationError.self) {
            try PipelineConfiguration(environment: ["IAP_APPS_FILE": try write("one.json", #"{"com.a.b": {}}"#), "IAP_BUNDLE_IDS": "com.c.d"])
        }
    }

    /// A job that names an app the apps file no longer lists (or lists without a key) asks Apple
    /// nothing: another app's evidence is rejected, a missing key is our gap (a dead letter).
    @Test func aNamedAppTheFileDoesNotServeAsksAppleNothing() async throws {
        struct Counting: TransactionLookup {
            func lookUp(transactionID: String, attempt: Int) async -> VerificationOutcome {
                Issue.record("asked Apple for \(transactionID)")
                return .rejected(reason: ReasonCode.transactionNotFound, detail: nil)
            }
        }
        let lookup = AppByAppTransactionLookup(apps: [(Self.game, Counting())]).named(Self.other)
        guard case .misconfigured(let reason, _) = await lookup.lookUp(transactionID: "1", attempt: 1) else {
            Issue.record("a named app without a key is not our configuration's gap")
            return
        }
        #expect(reason == ReasonCode.serverAPINotConfigured)
        let apple = AppleVerifier(configuration: AppleVerifierConfiguration(
            productionURL: "http://127.0.0.1:9/verifyReceipt", sandboxURL: "http://127.0.0.1:9/sandbox", timeout: .seconds(1), maxConnections: 1))
        let verifier = AppByAppReceiptVerifier(verifier: apple, apps: [(Self.game, "secret")]).named(Self.other)
        let outcome = await verifier.verify(receiptData: "cmVjZWlwdA==", attempt: 1)
        await apple.shutdown()
        guard case .rejected(let rejected, _) = outcome else {
            Issue.record("asked Apple for an app the file does not serve: \(outcome)")
            return
        }
        #expect(rejected == ReasonCode.bundleMismatch)
    }
}
