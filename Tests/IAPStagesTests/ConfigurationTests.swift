import AppleJWS
import AppleReceipt
import Foundation
@testable import IAPIntake
import IAPSettings
import PipelineCore
import IAPStages
import IAPOperations
import PipelineTestSupport
import Testing

@Suite struct ConfigurationTests {
    @Test func defaultsAreTheDocumentedOnes() throws {
        let configuration = try PipelineConfiguration(environment: [:])
        #expect(configuration.redis.url == "redis://127.0.0.1:6379")
        #expect(configuration.redis.prefix == "iap")
        #expect(configuration.httpHost == "127.0.0.1" && configuration.intake.httpPort == 8080)
        #expect(configuration.verifyReceipt.productionURL == "https://buy.itunes.apple.com/verifyReceipt")
        #expect(configuration.verifyReceipt.sandboxURL == "https://sandbox.itunes.apple.com/verifyReceipt")
        #expect(configuration.worker.concurrency == 64 && configuration.retryPolicy.maxAttempts == 12)
        #expect(configuration.retryPolicy.base == .seconds(1) && configuration.retryPolicy.max == .seconds(600))
        #expect(configuration.worker.lease == .seconds(30) && configuration.ticketTTL == .seconds(604_800))
        #expect(configuration.intake.maxBodyBytes == 262_144 && configuration.worker.shutdownGrace == .seconds(25))
        #expect(configuration.redis.replicaTimeout == .seconds(1) && configuration.webhook.timeout == .seconds(10))
        #expect(configuration.recheck == .standard && configuration.policy.sharing == .bind && configuration.policy.sandbox == "allow")
    }

    @Test func readsEveryVariable() throws {
        let configuration = try PipelineConfiguration(environment: [
            "IAP_REDIS_URL": "redis://:pw@cache:6390/2", "IAP_PREFIX": "{iap}", "IAP_HTTP_PORT": "9000",
            "IAP_BUNDLE_IDS": "a.b, c.d ,", "IAP_CONCURRENCY": "8", "IAP_LEASE_MS": "5000",
            "IAP_APPLE_SHARED_SECRET": "s", "IAP_MAX_BODY_BYTES": "4096",
        ])
        #expect(configuration.redis.connection.endpoint == .tcp(host: "cache", port: 6390) && configuration.redis.connection.database == 2)
        #expect(configuration.keys.queue(.verify) == "{iap}:queue:verify")
        #expect(configuration.intake.httpPort == 9000 && configuration.worker.concurrency == 8 && configuration.worker.lease == .seconds(5))
        #expect(configuration.bundleIDs == ["a.b", "c.d"])
        #expect(configuration.apple.sharedSecret == "s")
    }

    @Test(arguments: [
        ("IAP_REDIS_URL", "http://x"), ("IAP_HTTP_PORT", "80a"), ("IAP_HTTP_PORT", "70000"),
        ("IAP_CONCURRENCY", "0"), ("IAP_MAX_ATTEMPTS", "-1"), ("IAP_LEASE_MS", "10"),
        ("IAP_APPLE_PRODUCTION_URL", "not a url"), ("IAP_APPLE_SANDBOX_URL", "ftp://x/y"),
        ("IAP_TICKET_TTL_S", "1"), ("IAP_MAX_BODY_BYTES", "big"), ("IAP_PREFIX", "a b"),
        ("IAP_APPLE_API_PRODUCTION_URL", "api.storekit.apple.com"), ("IAP_APPLE_API_MAX_RPS", "0"),
        ("IAP_APPLE_APP_ID", "abc"), ("IAP_APPLE_APP_ID", "-5"),
        ("IAP_CURRENCIES", "USD,US"), ("IAP_CURRENCIES", "US$"), ("IAP_MAX_REFUNDS_PER_USER", "-1"),
        ("IAP_REFUND_PREFERENCE", "maybe"), ("IAP_SHARING_POLICY", "lend"),
    ])
    func aMalformedValueNamesItsVariable(_ variable: String, _ value: String) {
        #expect { try PipelineConfiguration(environment: [variable: value]) } throws: { error in
            (error as? ConfigurationError)?.variable == variable
        }
    }

    @Test func storeKitSettingsHaveTheirDefaultsAndAreCheckedAtStart() throws {
        let defaults = try PipelineConfiguration(environment: [:])
        #expect(try defaults.rootCertificates() == [AppleRootCertificates.appleRootCAG3])
        #expect(defaults.serverAPI.productionURL == "https://api.storekit.apple.com")
        #expect(defaults.serverAPI.sandboxURL == "https://api.storekit-sandbox.apple.com")
        #expect(defaults.serverAPI.maxRPS == 50 && defaults.appleAppID == nil)
        #expect(!defaults.isServerAPIConfigured)
        #expect(try defaults.serverAPIs().isEmpty)
        // Roots that cannot be read name the setting.
        let missingRoot = try PipelineConfiguration(environment: ["IAP_APPLE_ROOT_CERTS": "/nonexistent/root.pem"])
        #expect { try missingRoot.rootCertificates() } throws: { ($0 as? ConfigurationError)?.variable == "IAP_APPLE_ROOT_CERTS" }
        // The Server API keys come all three or not at all; the first missing one is named.
        #expect { try PipelineConfiguration(environment: ["IAP_APPLE_API_KEY_ID": "K"]) } throws: {
            ($0 as? ConfigurationError)?.variable == "IAP_APPLE_API_ISSUER_ID"
        }
        let unreadable = try PipelineConfiguration(environment: [
            "IAP_APPLE_API_KEY_ID": "K", "IAP_APPLE_API_ISSUER_ID": "I", "IAP_APPLE_API_PRIVATE_KEY_FILE": "/nonexistent/key.p8",
            "IAP_BUNDLE_IDS": "com.example.game",
        ])
        #expect(unreadable.isServerAPIConfigured)
        #expect { try unreadable.serverAPIs() } throws: { ($0 as? ConfigurationError)?.variable == "IAP_APPLE_API_PRIVATE_KEY_FILE" }
        let appID = try PipelineConfiguration(environment: ["IAP_APPLE_APP_ID": "1234567890", "IAP_BUNDLE_IDS": "b.one, a.two"])
        #expect(appID.appleAppID == 1_234_567_890 && appID.bundleIDList == ["b.one", "a.two"])
    }

    /// On a cluster with one bucket the pipeline runs on one slot: the prefix must be a tag.
    @Test func onAClusterOneBucketNeedsAHashTagPrefix() throws {
        #expect {
            try PipelineConfiguration(environment: ["IAP_REDIS_URL": "redis-cluster://127.0.0.1:7000", "IAP_BUCKETS": "1"])
        } throws: { error in
            (error as? ConfigurationError)?.variable == "IAP_PREFIX"
        }
        let tagged = try PipelineConfiguration(environment: ["IAP_REDIS_URL": "redis-cluster://127.0.0.1:7000", "IAP_PREFIX": "{iap}"])
        #expect(tagged.keys.queue(.verify) == "{iap}:queue:verify")
    }

    @Test func retryMaxBelowBaseIsRefused() {
        #expect { try PipelineConfiguration(environment: ["IAP_RETRY_BASE_MS": "5000", "IAP_RETRY_MAX_MS": "10"]) } throws: { error in
            (error as? ConfigurationError)?.variable == "IAP_RETRY_MAX_MS"
        }
    }

    @Test func stagesRequireWhatTheyCannotGuess() throws {
        let configuration = try PipelineConfiguration(environment: ["IAP_PRODUCTS_FILE": "/nonexistent/products.json"])
        #expect(throws: ConfigurationError("IAP_BUNDLE_IDS", "required: the comma-separated bundle ids of your apps")) {
            try configuration.requireBundleIDs()
        }
        #expect { try configuration.requireCatalog() } throws: { ($0 as? ConfigurationError)?.variable == "IAP_PRODUCTS_FILE" }
        #expect { try PipelineConfiguration(environment: [:]).requireCatalog() } throws: {
            ($0 as? ConfigurationError)?.variable == "IAP_PRODUCTS_FILE"
        }
    }
}

@Suite struct ProductCatalogTests {
    let catalog = try! ProductCatalog(json: Data("""
        {"products": {"gold": {"type": "consumable"}, "pack": {"type": "non_consumable"},
         "vip": {"type": "auto_renewable"}, "pass": {"type": "non_renewing"}}}
        """.utf8))

    /// The purchase policy's settings: off by default; currencies upper-cased; the sandbox file
    /// read with comments and blank lines skipped; an unreadable one refused by name.
    @Test func thePurchasePolicyIsOpenByDefaultAndReadsItsSettings() throws {
        #expect(try PipelineConfiguration(environment: [:]).purchasePolicy() == .open)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-\(UUID().uuidString).txt")
        try "# App Review\nreviewer-1\n\n  tester-2  # TestFlight\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let policy = try PipelineConfiguration(environment: [
            "IAP_CURRENCIES": "usd, EUR", "IAP_SANDBOX": file.path, "IAP_MAX_REFUNDS_PER_USER": "3",
        ]).purchasePolicy()
        #expect(policy == PurchasePolicy(currencies: ["USD", "EUR"], sandbox: .users(["reviewer-1", "tester-2"]), maxRefundsPerUser: 3))
        #expect(try PipelineConfiguration(environment: ["IAP_SHARING_POLICY": "Transfer"]).purchasePolicy().sharing == .transfer)
        #expect(try PipelineConfiguration(environment: ["IAP_SANDBOX": "DENY"]).purchasePolicy().sandbox == .deny)
        #expect { try PipelineConfiguration(environment: ["IAP_SANDBOX": "/no/such/file"]).purchasePolicy() } throws: { error in
            (error as? ConfigurationError)?.variable == "IAP_SANDBOX"
        }
        #expect(try PipelineConfiguration(environment: [:]).errands.refundPreference == nil)
        #expect(try PipelineConfiguration(environment: ["IAP_REFUND_PREFERENCE": "None"]).errands.refundPreference == nil)
        #expect(try PipelineConfiguration(environment: ["IAP_REFUND_PREFERENCE": "grant_Prorated"]).errands.refundPreference
            == RefundPreferences(fallback: .grantProrated))
        // A map by Apple's consumptionRequestReason: a reason not named takes default; none is no preference.
        let map = try #require(try PipelineConfiguration(environment: [
            "IAP_REFUND_PREFERENCE": "UNINTENDED_PURCHASE=grant_full, legal=none,default=decline",
        ]).errands.refundPreference)
        #expect(map.preference(for: "UNINTENDED_PURCHASE") == .grantFull && map.preference(for: "LEGAL") == nil)
        #expect(map.preference(for: "FULFILLMENT_ISSUE") == .decline && map.preference(for: nil) == .decline)
        #expect(try PipelineConfiguration(environment: ["IAP_REFUND_PREFERENCE": "OTHER=grant_full"]).errands.refundPreference?
            .preference(for: "LEGAL") == nil)
        for bad in ["maybe", "UNINTENDED=grant_full", "OTHER=refund", "OTHER=decline,OTHER=grant_full", "OTHER"] {
            #expect { try PipelineConfiguration(environment: ["IAP_REFUND_PREFERENCE": bad]) } throws: { error in
                (error as? ConfigurationError)?.variable == "IAP_REFUND_PREFERENCE"
            }
        }
        let catalog = try ProductCatalog(json: Data(#"{"products": {"gems": {"type": "consumable", "daily_limit_per_user": 6}}}"#.utf8))
        #expect(catalog.dailyLimits == ["gems": 6])
    }

    @Test func theProductTypeDecidesTheGrantUnit() {
        #expect(catalog.grantUnit(for: .init(transactionID: "2", originalTransactionID: "1", productID: "gold")) == "2")
        #expect(catalog.grantUnit(for: .init(transactionID: "2", originalTransactionID: "1", productID: "pack")) == "1")
        #expect(catalog.grantUnit(for: .init(transactionID: "2", originalTransactionID: "1", productID: "vip", webOrderLineItemID: "9")) == "wol:9")
        #expect(catalog.grantUnit(for: .init(transactionID: "2", originalTransactionID: "1", productID: "vip")) == "2")
        #expect(catalog.grantUnit(for: .init(transactionID: "3", originalTransactionID: "1", productID: "pass")) == "3")
        #expect(catalog.grantUnit(for: .init(transactionID: "2", productID: "unknown")) == nil)
    }

    @Test func aBadCatalogIsRefused() {
        #expect(throws: (any Error).self) { try ProductCatalog(json: Data(#"{"products": {"x": {"type": "gift"}}}"#.utf8)) }
        #expect(throws: (any Error).self) {
            try ProductCatalog(json: Data(#"{"products": {"x": {"type": "consumable", "daily_limit_per_user": 0}}}"#.utf8))
        }
        // Consumables give no entitlements; only subscriptions have a group; names are plain.
        #expect(throws: (any Error).self) {
            try ProductCatalog(json: Data(#"{"products": {"x": {"type": "consumable", "entitlements": ["gold"]}}}"#.utf8))
        }
        #expect(throws: (any Error).self) {
            try ProductCatalog(json: Data(#"{"products": {"x": {"type": "non_consumable", "subscription_group": "g"}}}"#.utf8))
        }
        #expect(throws: (any Error).self) {
            try ProductCatalog(json: Data(#"{"products": {"x": {"type": "non_consumable", "entitlements": ["a,b"]}}}"#.utf8))
        }
        #expect(throws: (any Error).self) { try ProductCatalog(json: Data("[]".utf8)) }
        // Offers: only on a subscription, with a plain id and a known eligibility.
        #expect(throws: (any Error).self) {
            try ProductCatalog(json: Data(#"{"products": {"x": {"type": "consumable", "offers": {"o": {"eligibility": "any"}}}}}"#.utf8))
        }
        #expect(throws: (any Error).self) {
            try ProductCatalog(json: Data(#"{"products": {"x": {"type": "auto_renewable", "offers": {"o": {"eligibility": "vip"}}}}}"#.utf8))
        }
        #expect(throws: (any Error).self) {
            try ProductCatalog(json: Data(#"{"products": {"x": {"type": "auto_renewable", "offers": {"a,b": {"eligibility": "new"}}}}}"#.utf8))
        }
    }

    @Test func aSubscriptionsOffersAndGroupAreRead() throws {
        let catalog = try ProductCatalog(json: Data(#"""
            {"products": {"m": {"type": "auto_renewable", "subscription_group": "g", "offers": {"back": {"eligibility": "lapsed"}}},
                          "y": {"type": "auto_renewable", "subscription_group": "g"}, "solo": {"type": "auto_renewable"}}}
            """#.utf8))
        #expect(catalog.offers == ["m": ["back": .lapsed]])
        #expect(catalog.groupProducts(of: "y") == ["m", "y"] && catalog.groupProducts(of: "solo") == ["solo"])
    }
}

@Suite struct RetryPolicyTests {
    struct Fixed: RandomNumberGenerator {
        var value: UInt64
        mutating func next() -> UInt64 { value }
    }

    @Test func fullJitterStaysUnderTheExponentialCeiling() {
        let policy = RetryPolicy(base: .seconds(1), max: .seconds(600), maxAttempts: 12)
        var random = SystemRandomNumberGenerator()
        for attempt in 1...30 {
            let ceiling = Duration.milliseconds(min(600_000, 1000 << min(attempt - 1, 40)))
            for _ in 0..<50 {
                let delay = policy.delay(afterAttempt: attempt, retryAfter: nil, using: &random)
                #expect((.zero...ceiling).contains(delay))
            }
        }
        var top = Fixed(value: .max)
        #expect(policy.delay(afterAttempt: 4, retryAfter: nil, using: &top) == .seconds(8))
    }

    @Test func retryAfterIsHonouredUpToTheMaximum() {
        let policy = RetryPolicy(base: .milliseconds(10), max: .seconds(60), maxAttempts: 3)
        // Jitter after a first attempt is at most 10 ms here, far below what Apple asked for.
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(7)) == .seconds(7))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(3600)) == .seconds(60))
    }
}

@Suite struct TicketIDTests {
    @Test func ticketsAreUnguessableAndURLSafe() {
        let tickets = (0..<2000).map { _ in TicketID.make() }
        #expect(Set(tickets).count == tickets.count)
        #expect(tickets.allSatisfy(TicketID.isWellFormed))
        #expect(!TicketID.isWellFormed("AAAAAAAAAAAAAAAAAAAAA/"))
        // With buckets, a ticket id names its bucket first.
        #expect(TicketID.isWellFormed("17.AAAAAAAAAAAAAAAAAAAAAA") && TicketID.isWellFormed("0.AAAAAAAAAAAAAAAAAAAAAA"))
        #expect(!TicketID.isWellFormed(".AAAAAAAAAAAAAAAAAAAAAA") && !TicketID.isWellFormed("x1.AAAAAAAAAAAAAAAAAAAAAA"))
        #expect(!TicketID.isWellFormed("12345.AAAAAAAAAAAAAAAAAAAAAA") && !TicketID.isWellFormed("1.AAAAAAAAAAAAAAAAAAAAA"))
        #expect(!TicketID.isWellFormed("short"))
    }

    /// Random bytes are drawn eight at a time: every length comes out whole, and every character
    /// position varies (none left at its zero value by a short draw).
    @Test func randomBytesOfEveryLengthVaryInEveryPosition() {
        for count in [1, 7, 8, 9, 16, 33] {
            let draws = (0..<200).map { _ in TicketID.random(bytes: count) }
            #expect(draws.allSatisfy { $0.utf8.count == (count * 4 + 2) / 3 }, "\(count)")
            for position in 0..<draws[0].utf8.count {
                let seen = Set(draws.map { Array($0.utf8)[position] })
                #expect(seen.count > 1, "bytes \(count), position \(position)")
            }
        }
    }
}

@Suite struct ReceiptDigestTests {
    /// The digest keys `iap:receipt:<digest>`: its format must never change, or resubmissions
    /// after an upgrade would get a second ticket. Expected value from Python's hashlib.
    @Test func isTheLowercaseHexSHA256OfUserNulReceipt() {
        let submission = ReceiptSubmission(
            evidence: .receipt(base64: "AAEC//4=", bytes: [0, 1, 2, 255, 254]), userID: "player-1", productID: nil,
            transactionID: nil)
        #expect(IntakeRoutes.digest(submission) == "508d55de02f04e60d8c54b66e80788c0fdbf01927f0868a8e83a9b4270727616")
    }

    /// Signed transactions and lookups are tagged with their kind, so no evidence of one kind can
    /// take the ticket of another. Expected values from Python's hashlib.
    @Test func signedTransactionsAndLookupsAreTaggedByKind() {
        let signed = ReceiptSubmission(
            evidence: .signedTransaction("e30.e30.c2ln"), userID: "player-1", productID: nil, transactionID: nil)
        #expect(IntakeRoutes.digest(signed) == "08483b8f2194167a93dd09283a6ace3915e728fdfb343a7875d385b4737541b4")
        let lookup = ReceiptSubmission(
            evidence: .transactionLookup("2000000000000001"), userID: "player-1", productID: nil, transactionID: "2000000000000001")
        #expect(IntakeRoutes.digest(lookup) == "d2136a7a44cb7a06d4786cfb452aa2f25d41c6c5defe3c3d6bef083b3fb2f6fb")
    }
}
